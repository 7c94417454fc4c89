const { test, before, after, beforeEach } = require('node:test');
const assert = require('node:assert');
const { TableClient } = require('@azure/data-tables');
const { startTablestore } = require('@tablestore/testkit');

// Retries for tests: waits of retryDelayInMs * 2**n, jittered, at most
// maxRetryDelayInMs (the SDK's defaults are 1 s and 64 s).
const options = {
  allowInsecureConnection: true,
  retryOptions: { maxRetries: 3, retryDelayInMs: 1, maxRetryDelayInMs: 5 },
};

let ts;
before(async () => { ts = await startTablestore(); });
after(() => ts.stop());
beforeEach(() => ts.reset()); // a clean slate for each test

test('an insert is retried through ServerBusy', async () => {
  const orders = TableClient.fromConnectionString(ts.connectionString, 'orders', options);
  await orders.createTable();
  await ts.withFault({ operation: 'InsertEntity', code: 'ServerBusy', times: 2 }, () =>
    orders.createEntity({ partitionKey: 'alice', rowKey: '1', total: 30 }));
  assert.deepStrictEqual((await ts.requests()).map((r) => r.status), [201, 503, 503, 204]);
});
