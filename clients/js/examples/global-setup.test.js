const { test, afterEach } = require('node:test');
const assert = require('node:assert');
const { TableClient } = require('@azure/data-tables');
const { connectTablestore } = require('@tablestore/testkit');
const jestSetup = require('@tablestore/testkit/jest-global-setup');
const jestTeardown = require('@tablestore/testkit/jest-global-teardown');
const vitestSetup = require('@tablestore/testkit/vitest-global-setup');

// The global setups run here as Jest and Vitest run them, once before
// the workers, which inherit the environment the setups export.
const options = { allowInsecureConnection: true, retryOptions: { maxRetries: 0 } };

const saved = { ...process.env };
afterEach(() => {
  for (const k of Object.keys(process.env)) if (!(k in saved)) delete process.env[k];
  Object.assign(process.env, saved);
});

// What a worker sees through connectTablestore(): the flavor, the order
// a query gives rows inserted as 2, 10, 1, and the HTTP method of a
// merge (the SDK sends POST with X-HTTP-Method to Cosmos DB).
async function workerView() {
  const ts = connectTablestore();
  const orders = TableClient.fromConnectionString(ts.connectionString, 'orders', options);
  await orders.createTable();
  for (const rk of ['2', '10', '1']) await orders.createEntity({ partitionKey: 'alice', rowKey: rk });
  await orders.updateEntity({ partitionKey: 'alice', rowKey: '1', note: 'merged' }, 'Merge');
  const keys = [];
  for await (const e of orders.listEntities()) keys.push(e.rowKey);
  const merge = (await ts.requests()).find((r) => r.operation === 'MergeEntity');
  return { cosmos: ts.cosmos, keys, mergeMethod: merge.method };
}

const cosmosView = { cosmos: true, keys: ['2', '10', '1'], mergeMethod: 'POST' };
const storageView = { cosmos: false, keys: ['1', '10', '2'], mergeMethod: 'PATCH' };

test('Jest: TABLESTORE_COSMOS=true serves Cosmos DB for Table', async () => {
  process.env.TABLESTORE_COSMOS = 'true';
  await jestSetup();
  try {
    assert.match(process.env.TABLESTORE_CONNECTION_STRING, /AccountName=localhost;/);
    assert.deepStrictEqual(await workerView(), cosmosView);
  } finally {
    await jestTeardown();
  }
});

test('Jest: withOptions({ cosmos: true }) serves Cosmos DB for Table', async () => {
  delete process.env.TABLESTORE_COSMOS;
  await jestSetup.withOptions({ cosmos: true })();
  try {
    assert.strictEqual(process.env.TABLESTORE_COSMOS, 'true');
    assert.deepStrictEqual(await workerView(), cosmosView);
  } finally {
    await jestTeardown();
  }
});

test('Vitest: withOptions({ cosmos: true }) serves Cosmos DB for Table', async () => {
  delete process.env.TABLESTORE_COSMOS;
  const teardown = await vitestSetup.withOptions({ cosmos: true })();
  try {
    assert.deepStrictEqual(await workerView(), cosmosView);
  } finally {
    await teardown();
  }
});

test('Vitest: Storage without the option, and when the option says false', async () => {
  delete process.env.TABLESTORE_COSMOS;
  let teardown = await vitestSetup();
  try {
    assert.strictEqual(process.env.TABLESTORE_COSMOS, 'false');
    assert.deepStrictEqual(await workerView(), storageView);
  } finally {
    await teardown();
  }
  process.env.TABLESTORE_COSMOS = 'true';
  teardown = await vitestSetup.withOptions({ cosmos: false })();
  try {
    assert.deepStrictEqual(await workerView(), storageView);
  } finally {
    await teardown();
  }
});
