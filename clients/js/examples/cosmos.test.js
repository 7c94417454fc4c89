const { test, before, after, beforeEach } = require('node:test');
const assert = require('node:assert');
const { TableClient, RestError } = require('@azure/data-tables');
const { startTablestore } = require('@tablestore/testkit');

// No retries: the throttling test wants to see the 429 itself.
const options = { allowInsecureConnection: true, retryOptions: { maxRetries: 0 } };

let storage;
let cosmos;
before(async () => {
  [storage, cosmos] = await Promise.all([startTablestore(), startTablestore({ cosmos: true })]);
});
after(() => Promise.all([storage.stop(), cosmos.stop()]));
beforeEach(() => Promise.all([storage.reset(), cosmos.reset()]));

// Inserts rows 1 to 10, merges into row 1, and returns the row keys as a
// query gives them and the HTTP method the merge arrived with.
async function insertMergeQuery(ts) {
  const orders = TableClient.fromConnectionString(ts.connectionString, 'orders', options);
  await orders.createTable();
  for (let n = 1; n <= 10; n++) await orders.createEntity({ partitionKey: 'alice', rowKey: String(n) });
  await orders.updateEntity({ partitionKey: 'alice', rowKey: '1', note: 'merged' }, 'Merge');
  const keys = [];
  for await (const e of orders.listEntities()) keys.push(e.rowKey);
  const merge = (await ts.requests()).find((r) => r.operation === 'MergeEntity');
  return { keys, mergeMethod: merge.method };
}

test('Cosmos answers a query in insertion order, Storage in key order', async () => {
  const s = await insertMergeQuery(storage);
  const c = await insertMergeQuery(cosmos);
  // The SDK's Cosmos mode sends a merge as POST with X-HTTP-Method: MERGE.
  assert.strictEqual(s.mergeMethod, 'PATCH');
  assert.strictEqual(c.mergeMethod, 'POST');
  assert.deepStrictEqual(s.keys, ['1', '10', '2', '3', '4', '5', '6', '7', '8', '9']);
  assert.deepStrictEqual(c.keys, ['1', '2', '3', '4', '5', '6', '7', '8', '9', '10']);
});

test('Cosmos refuses a 300-byte RowKey', async () => {
  const orders = TableClient.fromConnectionString(cosmos.connectionString, 'orders', options);
  await orders.createTable();
  await assert.rejects(orders.createEntity({ partitionKey: 'alice', rowKey: 'r'.repeat(300) }),
    (e) => e instanceof RestError && e.statusCode === 400);
  assert.strictEqual((await cosmos.requests()).at(-1).code, 'KeyValueTooLarge');
});

test('Cosmos throttles beyond its request units', async () => {
  // 10 RU a second; an insert of about 1 KB costs 5 or 10 RU (docs/cosmos.md).
  const ts = await startTablestore({ cosmos: true, args: ['--cosmos-ru-per-second', '10'] });
  try {
    const orders = TableClient.fromConnectionString(ts.connectionString, 'orders', options);
    await orders.createTable();
    const err = await (async () => {
      for (let n = 0; n < 10; n++) {
        try {
          await orders.createEntity({ partitionKey: 'alice', rowKey: String(n), note: 'x'.repeat(1000) });
        } catch (e) {
          return e;
        }
      }
      return undefined;
    })();
    assert.ok(err instanceof RestError, `no request refused: ${err}`);
    assert.strictEqual(err.statusCode, 429);
    assert.ok(Number(err.response.headers.get('x-ms-retry-after-ms')) > 0);
    const log = await ts.requests();
    assert.strictEqual(log.at(-1).status, 429);
    assert.ok(log.slice(0, -1).every((r) => r.request_charge > 0)); // the charges before it
  } finally {
    await ts.stop();
  }
});
