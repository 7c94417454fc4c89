'use strict';
// tablestore for JavaScript tests: startTablestore() runs
// `tablestore serve --testkit` on free loopback ports (the binary comes
// from the @tablestore/testkit-<platform>-<arch> package npm installed
// beside this one) and gives its connection string and test controls.

const { spawn } = require('node:child_process');
const http = require('node:http');
const path = require('node:path');
const readline = require('node:readline');

// Azure's development account, which tablestore serves by default.
const DEV_ACCOUNT = 'devstoreaccount1';
const DEV_KEY =
  'Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==';
// The Cosmos DB emulator's account and key, which serve --cosmos serves.
const COSMOS_DEV_ACCOUNT = 'localhost';
const COSMOS_DEV_KEY =
  'C2y6yDjf5/R+ob0N8A7Cgv30VRDJIWEHLM+4QDU5DE2nQ9nDuVTqobD4b8mGGyPMbIZnqyMsEcaGQy67XIw/Jw==';

/** The tablestore binary: $TABLESTORE_BIN, else the platform package's. */
function binaryPath() {
  if (process.env.TABLESTORE_BIN) return process.env.TABLESTORE_BIN;
  const pkg = `@tablestore/testkit-${process.platform}-${process.arch}`;
  let dir;
  try {
    dir = path.dirname(require.resolve(`${pkg}/package.json`));
  } catch {
    throw new Error(
      `tablestore: no binary for ${process.platform}-${process.arch}: ${pkg} is not installed ` +
        '(set TABLESTORE_BIN to a tablestore binary)');
  }
  return path.join(dir, 'bin', process.platform === 'win32' ? 'tablestore.exe' : 'tablestore');
}

/** A control request the server refused: status, Azure's error code, message. */
class TablestoreError extends Error {
  constructor(status, code, message) {
    super(`tablestore: ${status} ${code}: ${message}`);
    this.name = 'TablestoreError';
    this.status = status;
    this.code = code;
  }
}

// A duration for the controls: a number is milliseconds, a string
// ("20ms", "2h") passes as it is.
function duration(d) {
  return typeof d === 'number' ? `${Math.round(d * 1e6)}ns` : d;
}

const FAULT_FIELDS = {
  operation: 'operation', table: 'table', partition: 'partition', status: 'status',
  code: 'code', times: 'times', every: 'every', probability: 'probability', seed: 'seed',
  latency: 'latency', retryAfter: 'retry_after', drop: 'drop', page: 'page',
};

class Tablestore {
  /**
   * A server with test controls: use startTablestore() or
   * connectTablestore() rather than this constructor. With cosmos it
   * answers as Cosmos DB for Table (docs/cosmos.md).
   */
  constructor({ url, controlUrl, token, child, log, cosmos = false, account, key }) {
    this.url = url.replace(/\/+$/, '');
    this.controlUrl = controlUrl.replace(/\/+$/, '');
    this.cosmos = cosmos;
    this.account = account || (cosmos ? COSMOS_DEV_ACCOUNT : DEV_ACCOUNT);
    this.key = key || (cosmos ? COSMOS_DEV_KEY : DEV_KEY);
    this._token = token;
    this._child = child;
    this._log = log || [];
    this._agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    this.clock = {
      now: async () => new Date((await this._call('GET', '/clock')).now),
      /** Moves the clock forward: milliseconds or a string such as "2h". */
      advance: async (d) => new Date((await this._call('POST', '/clock', { advance: duration(d) })).now),
      /** Sets the clock to a Date or an RFC 3339 string. */
      set: async (t) =>
        new Date((await this._call('POST', '/clock', { set: t instanceof Date ? t.toISOString() : t })).now),
    };
  }

  /** A connection string for the development account. The endpoint is an
   * IP address, which keeps the SDK in its Storage mode; for a Cosmos
   * server it is the Cosmos DB emulator's (localhost, the service root),
   * which puts the SDK in its Cosmos mode. */
  get connectionString() {
    const endpoint = this.cosmos ? `${this.url}/` : this.url;
    return `DefaultEndpointsProtocol=http;AccountName=${this.account};AccountKey=${this.key};TableEndpoint=${endpoint};`;
  }

  /** The server's last lines of standard error (a started server only). */
  get log() {
    return this._log.slice();
  }

  /** A clean slate: state back to the seed, faults removed, clock real, request log empty. */
  async reset() {
    await this._call('POST', '/reset');
  }

  /** Saves the whole state as name. */
  async snapshot(name = 'default') {
    await this._call('PUT', `/snapshots/${encodeURIComponent(name)}`);
    return name;
  }

  /** Replaces the state with the snapshot name's. */
  async restore(name = 'default') {
    await this._call('POST', `/snapshots/${encodeURIComponent(name)}/restore`);
  }

  /**
   * Adds a fault rule ({operation, code, status, table, partition, times,
   * every, probability, seed, latency, retryAfter, drop, page}; durations
   * in milliseconds or as strings) and returns it: remove() takes it away.
   */
  async fault(rule) {
    const body = {};
    for (const [k, v] of Object.entries(rule)) {
      const field = FAULT_FIELDS[k];
      if (!field) throw new TypeError(`tablestore: unknown fault field ${JSON.stringify(k)}`);
      if (v !== undefined) body[field] = k === 'latency' || k === 'retryAfter' ? duration(v) : v;
    }
    const { id } = await this._call('POST', '/faults', body);
    return {
      id,
      remove: async () => {
        try {
          await this._call('DELETE', `/faults/${id}`);
        } catch (e) {
          if (!(e instanceof TablestoreError && e.status === 404)) throw e; // a reset removed it
        }
      },
    };
  }

  /** Runs fn with the fault rule in place, removing it afterwards. */
  async withFault(rule, fn) {
    const f = await this.fault(rule);
    try {
      return await fn();
    } finally {
      await f.remove();
    }
  }

  async clearFaults() {
    await this._call('DELETE', '/faults');
  }

  /** The requests served since the last reset, oldest first. */
  async requests() {
    return (await this._call('GET', '/requests')).requests;
  }

  async clearRequests() {
    await this._call('DELETE', '/requests');
  }

  /** Sets TABLESTORE_URL, TABLESTORE_CONTROL_URL,
   * TABLESTORE_CONNECTION_STRING and TABLESTORE_COSMOS for test workers
   * started afterwards, whose connectTablestore() reaches this server. */
  exportEnv(env = process.env) {
    env.TABLESTORE_URL = this.url;
    env.TABLESTORE_CONTROL_URL = this.controlUrl;
    env.TABLESTORE_CONNECTION_STRING = this.connectionString;
    env.TABLESTORE_COSMOS = String(this.cosmos);
  }

  /** Stops a started server and closes the controls' connection. */
  async stop() {
    this._agent.destroy();
    const child = this._child;
    this._child = undefined;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    await new Promise((resolve) => {
      const timer = setTimeout(() => child.kill('SIGKILL'), 10000);
      child.once('exit', () => {
        clearTimeout(timer);
        resolve();
      });
      child.kill('SIGTERM');
    });
  }

  _call(method, p, body) {
    const data = body === undefined ? undefined : JSON.stringify(body);
    const u = new URL(this.controlUrl + p);
    // A length even when empty: no chunked body for the server to wait on.
    const headers = { 'Content-Length': data === undefined ? 0 : Buffer.byteLength(data) };
    if (data !== undefined) headers['Content-Type'] = 'application/json';
    if (this._token) headers.Authorization = `Bearer ${this._token}`;
    return new Promise((resolve, reject) => {
      const req = http.request(u, { method, headers, agent: this._agent }, (res) => {
        const chunks = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () => {
          const raw = Buffer.concat(chunks).toString();
          if (res.statusCode >= 400) {
            let code = res.headers['x-ms-error-code'] || '';
            let message = raw;
            try {
              const err = JSON.parse(raw)['odata.error'];
              code = err.code;
              message = err.message.value;
            } catch {
              // not Azure's error body: keep the raw text
            }
            reject(new TablestoreError(res.statusCode, code, message));
            return;
          }
          try {
            resolve(raw ? JSON.parse(raw) : null);
          } catch (e) {
            reject(e);
          }
        });
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end(data);
    });
  }
}

/**
 * Starts `tablestore serve --testkit` on free loopback ports and resolves
 * once it listens. Options: seed (a directory of JSON lines files), cosmos
 * (serve --cosmos: answers as Cosmos DB for Table, with a connection string
 * in the Cosmos DB emulator's shape), binary, args (more flags, such as
 * ['--cosmos-ru-per-second', '100']), timeout (ms, default 30000).
 */
function startTablestore({ seed, cosmos = false, binary, args = [], timeout = 30000 } = {}) {
  const cmd = binary || binaryPath();
  const argv = ['serve', '--testkit', '--addr', '127.0.0.1:0', '--admin-addr', '127.0.0.1:0'];
  // Said either way: serve would otherwise read $TABLESTORE_COSMOS.
  argv.push(cosmos ? '--cosmos' : '--cosmos=false');
  if (seed) argv.push('--seed', seed);
  argv.push(...args);
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, argv, { stdio: ['ignore', 'ignore', 'pipe'] });
    const log = [];
    let addr;
    let admin;
    let done = false;
    const fail = (why) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      child.kill('SIGKILL');
      reject(new Error(`tablestore: serve did not start (${why}):\n${log.join('\n')}`));
    };
    const timer = setTimeout(() => fail(`no address after ${timeout} ms`), timeout);
    child.on('error', (e) => fail(e.message));
    child.on('exit', (code, signal) => fail(`exited with ${signal || code}`));
    readline.createInterface({ input: child.stderr }).on('line', (line) => {
      log.push(line);
      if (log.length > 200) log.shift();
      let m;
      if ((m = /^serve: admin listening on (\S+)/.exec(line))) admin = m[1];
      else if ((m = /^serve: listening on (\S+)/.exec(line))) addr = m[1];
      if (!done && addr && admin) {
        done = true;
        clearTimeout(timer);
        // The server ends with this process; it does not hold it open.
        child.unref();
        child.stderr.unref();
        process.once('exit', () => child.kill('SIGKILL'));
        resolve(new Tablestore({
          // Cosmos's account is the host, not a path segment.
          url: cosmos ? `http://localhost:${addr.slice(addr.lastIndexOf(':') + 1)}` : `http://${addr}/${DEV_ACCOUNT}`,
          controlUrl: `http://${admin}/testkit`, child, log, cosmos,
          // A token in the environment guards this server's controls too.
          token: process.env.TABLESTORE_TESTKIT_TOKEN,
        }));
      }
    });
  });
}

// envFlag reads a boolean environment variable as serve reads its flags
// (1, t, true; 0, f, false; in any case); unset or empty is false.
function envFlag(name) {
  const v = (process.env[name] || '').toLowerCase();
  if (v === '' || v === '0' || v === 'f' || v === 'false') return false;
  if (v === '1' || v === 't' || v === 'true') return true;
  throw new Error(`tablestore: $${name} is ${JSON.stringify(process.env[name])}, not true or false`);
}

/**
 * The options the Jest and Vitest global setups give startTablestore:
 * seed from TABLESTORE_SEED and cosmos from TABLESTORE_COSMOS, then
 * options over them.
 */
function globalSetupOptions(options = {}) {
  return { seed: process.env.TABLESTORE_SEED || undefined, cosmos: envFlag('TABLESTORE_COSMOS'), ...options };
}

/**
 * A server started elsewhere: by a global setup (which exports
 * TABLESTORE_URL, TABLESTORE_CONTROL_URL and TABLESTORE_COSMOS) or in a
 * container (with TABLESTORE_TESTKIT_TOKEN for its controls). cosmos
 * (default: TABLESTORE_COSMOS): the server runs with --cosmos and url is
 * its service root (http://localhost:PORT).
 */
function connectTablestore({ url, controlUrl, token, cosmos = envFlag('TABLESTORE_COSMOS') } = {}) {
  url = url || process.env.TABLESTORE_URL;
  controlUrl = controlUrl || process.env.TABLESTORE_CONTROL_URL;
  if (!url || !controlUrl) {
    throw new Error('tablestore: no server to connect to: TABLESTORE_URL and TABLESTORE_CONTROL_URL are unset ' +
      '(is the global setup configured?)');
  }
  return new Tablestore({ url, controlUrl, cosmos, token: token || process.env.TABLESTORE_TESTKIT_TOKEN });
}

exports.startTablestore = startTablestore;
exports.connectTablestore = connectTablestore;
exports.binaryPath = binaryPath;
exports.globalSetupOptions = globalSetupOptions;
exports.Tablestore = Tablestore;
exports.TablestoreError = TablestoreError;
exports.DEV_ACCOUNT = DEV_ACCOUNT;
exports.DEV_KEY = DEV_KEY;
exports.COSMOS_DEV_ACCOUNT = COSMOS_DEV_ACCOUNT;
exports.COSMOS_DEV_KEY = COSMOS_DEV_KEY;
