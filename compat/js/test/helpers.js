// Shared setup for the scenarios: clients for the endpoint named by
// TABLES_CONNECTION_STRING, unique table names, error assertions, and a
// record of the last HTTP exchanges printed when a scenario fails.
"use strict";

const assert = require("node:assert/strict");
const { test } = require("node:test");
const {
  AzureNamedKeyCredential,
  AzureSASCredential,
  TableClient,
  TableServiceClient,
} = require("@azure/data-tables");

const connectionString = process.env.TABLES_CONNECTION_STRING;
if (!connectionString) {
  throw new Error("TABLES_CONNECTION_STRING is not set (see compat/js/README.md)");
}

function parseConnectionString(cs) {
  const fields = {};
  for (const part of cs.split(";")) {
    const eq = part.indexOf("=");
    if (eq > 0) fields[part.slice(0, eq)] = part.slice(eq + 1);
  }
  for (const need of ["AccountName", "AccountKey", "TableEndpoint"]) {
    if (!fields[need]) throw new Error(`TABLES_CONNECTION_STRING lacks ${need}`);
  }
  return fields;
}

const fields = parseConnectionString(connectionString);
const account = fields.AccountName;
const endpoint = fields.TableEndpoint.replace(/\/+$/, "");
const credential = new AzureNamedKeyCredential(account, fields.AccountKey);

// The last few exchanges, newest last, across all clients.
const exchanges = [];
function record(request, response) {
  exchanges.push({
    request: `${request.method} ${request.url}`,
    requestHeaders: request.headers.toJSON(),
    requestBody: typeof request.body === "string" ? request.body.slice(0, 2000) : undefined,
    status: response?.status,
    headers: response?.headers.toJSON(),
    body: response?.bodyAsText?.slice(0, 2000),
  });
  if (exchanges.length > 6) exchanges.shift();
}
const recordPolicy = {
  name: "recordExchanges",
  async sendRequest(request, next) {
    try {
      const response = await next(request);
      record(request, response);
      return response;
    } catch (err) {
      record(request, err.response);
      throw err;
    }
  },
};

// Options every client gets: plain http allowed, no retries (a server
// error must show at once), and the recorder.
function clientOptions() {
  return {
    allowInsecureConnection: true,
    retryOptions: { maxRetries: 0 },
    additionalPolicies: [{ policy: recordPolicy, position: "perCall" }],
  };
}

function serviceClient() {
  return TableServiceClient.fromConnectionString(connectionString, clientOptions());
}

function tableClient(name) {
  return TableClient.fromConnectionString(connectionString, name, clientOptions());
}

// A client authorised only by a SAS token (no account key).
function sasTableClient(name, sas) {
  return new TableClient(endpoint, name, new AzureSASCredential(sas), clientOptions());
}

function sasServiceClient(sas) {
  return new TableServiceClient(endpoint, new AzureSASCredential(sas), clientOptions());
}

let counter = 0;
const runId = Date.now().toString(36) + Math.floor(Math.random() * 1296).toString(36);

// tableName returns a fresh valid table name starting with prefix.
function tableName(prefix) {
  counter++;
  return `${prefix}${runId}n${counter}`.replace(/[^A-Za-z0-9]/g, "");
}

// freshTable creates a table that is deleted when the test ends.
async function freshTable(t, prefix = "js") {
  const name = tableName(prefix);
  const client = tableClient(name);
  await client.createTable();
  t.after(() => client.deleteTable().catch(() => {}));
  return client;
}

// errorCode returns the Azure error code the SDK exposes for err: its own
// code (set for transaction failures), else the odata.error code it
// parsed from the body (the generated client leaves RestError.code unset
// for those).
function errorCode(err) {
  return err.code ?? err.response?.parsedBody?.odataError?.code;
}

// expectRestError awaits promise and checks it failed with a RestError of
// the given HTTP status and (when given) Azure error code. It returns the
// error.
async function expectRestError(promise, statusCode, code) {
  let caught;
  await assert.rejects(promise, (err) => {
    caught = err;
    return true;
  });
  assert.equal(caught.name, "RestError", `want RestError, got ${caught.stack}`);
  assert.equal(caught.statusCode, statusCode, `status of ${caught.message}`);
  if (code !== undefined) assert.equal(errorCode(caught), code, `code of ${caught.message}`);
  return caught;
}

// collect drains an async iterator.
async function collect(iterable) {
  const out = [];
  for await (const x of iterable) out.push(x);
  return out;
}

// scenario is node:test's test, printing the last exchanges on failure so
// that a failing run shows what the server sent.
function scenario(name, fn) {
  test(name, async (t) => {
    exchanges.length = 0;
    try {
      await fn(t);
    } catch (err) {
      console.error(`--- ${name}: last HTTP exchanges`);
      for (const x of exchanges) console.error(JSON.stringify(x));
      throw err;
    }
  });
}

module.exports = {
  account,
  collect,
  credential,
  endpoint,
  errorCode,
  expectRestError,
  freshTable,
  sasServiceClient,
  sasTableClient,
  scenario,
  serviceClient,
  tableClient,
  tableName,
};
