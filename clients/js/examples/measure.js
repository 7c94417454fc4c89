// Measures the helper's figures (docs/testing-packages.md): start to the
// first signed 200, a clean slate, and a test meeting two ServerBusy
// answers with fast retries. Prints medians and ranges; asserts nothing.
//
//   node measure.js [ROUNDS]
const { TableServiceClient, TableClient } = require('@azure/data-tables');
const { startTablestore } = require('@tablestore/testkit');

const options = {
  allowInsecureConnection: true,
  retryOptions: { maxRetries: 3, retryDelayInMs: 1, maxRetryDelayInMs: 5 },
};

function show(what, samples) {
  samples.sort((a, b) => a - b);
  const mid = samples.length >> 1;
  const median = samples.length % 2 ? samples[mid] : (samples[mid - 1] + samples[mid]) / 2;
  console.log(`${what.padEnd(48)} median ${median.toFixed(3).padStart(8)} ms  ` +
    `(${samples[0].toFixed(3)}-${samples[samples.length - 1].toFixed(3)}, n=${samples.length})`);
}

const now = () => Number(process.hrtime.bigint()) / 1e6;

async function main() {
  const rounds = Number(process.argv[2] || 5);
  const starts = [];
  for (let i = 0; i < rounds; i++) {
    const t0 = now();
    const ts = await startTablestore();
    const svc = TableServiceClient.fromConnectionString(ts.connectionString, options);
    for await (const _ of svc.listTables()) break; // a signed GET /Tables answered 200
    starts.push(now() - t0);
    await ts.stop();
  }
  show('startTablestore() to the first signed 200', starts);

  const ts = await startTablestore();
  const resets = [];
  for (let i = 0; i < 1000; i++) {
    const t0 = now();
    await ts.reset();
    resets.push(now() - t0);
  }
  show('reset() (a clean slate), 1000 in a row', resets);

  const busy = [];
  const dirty = [];
  for (let i = 0; i < 20 * rounds; i++) {
    const r0 = now();
    await ts.reset(); // after the last round's table, insert and fault
    dirty.push(now() - r0);
    const table = TableClient.fromConnectionString(ts.connectionString, 'orders', options);
    await table.createTable();
    const t0 = now();
    await ts.withFault({ operation: 'InsertEntity', code: 'ServerBusy', times: 2 }, () =>
      table.createEntity({ partitionKey: 'p', rowKey: String(i) }));
    busy.push(now() - t0);
    const statuses = (await ts.requests()).map((r) => r.status);
    if (statuses.slice(-3, -1).join() !== '503,503') throw new Error(`measure: no two 503s: ${statuses}`);
  }
  show("reset() after a test's writes", dirty.slice(1));
  show('an insert through two ServerBusy (fault to 204)', busy);
  await ts.stop();
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
