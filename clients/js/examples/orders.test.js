// A suite of the shape a service's tests have: one server for the file,
// a clean slate for each test, the controls driving failures and time.
const { test, before, after, beforeEach } = require('node:test');
const assert = require('node:assert');
const path = require('node:path');
const { TableClient, RestError } = require('@azure/data-tables');
const { startTablestore } = require('@tablestore/testkit');

const options = {
  allowInsecureConnection: true,
  retryOptions: { maxRetries: 3, retryDelayInMs: 1, maxRetryDelayInMs: 5 },
};

let ts;
let customers;
before(async () => {
  ts = await startTablestore({ seed: path.join(__dirname, 'seed') });
  customers = TableClient.fromConnectionString(ts.connectionString, 'customers', options);
});
after(() => ts.stop());
beforeEach(() => ts.reset());

async function spendCredit(region, name, amount) {
  const c = await customers.getEntity(region, name);
  if (c.Credit < amount) throw new Error('not enough credit');
  const updated = { partitionKey: region, rowKey: name, Name: c.Name, Credit: c.Credit - amount };
  await customers.updateEntity(updated, 'Replace', { etag: c.etag });
}

test('seeded credit is spent', async () => {
  await spendCredit('eu', 'alice', 40);
  assert.strictEqual((await customers.getEntity('eu', 'alice')).Credit, 60);
});

test('each test starts from the seed again', async () => {
  assert.strictEqual((await customers.getEntity('eu', 'alice')).Credit, 100);
});

test('a concurrent change refuses the update', async () => {
  await ts.withFault({ operation: 'UpdateEntity', status: 412, times: 1 }, async () => {
    await assert.rejects(spendCredit('eu', 'bob', 5), (e) => e instanceof RestError && e.statusCode === 412);
  });
});

test('snapshot and restore', async () => {
  await ts.snapshot('before');
  await spendCredit('us', 'carol', 75);
  await ts.restore('before');
  assert.strictEqual((await customers.getEntity('us', 'carol')).Credit, 75);
});

test('the clock moves entity timestamps', async () => {
  const before = new Date((await customers.getEntity('eu', 'bob')).timestamp);
  await ts.clock.advance('48h');
  await spendCredit('eu', 'bob', 1);
  const after = new Date((await customers.getEntity('eu', 'bob')).timestamp);
  assert.ok(after - before >= 48 * 3600 * 1000, `${before.toISOString()} -> ${after.toISOString()}`);
});

test('the request log names each operation', async () => {
  await customers.getEntity('eu', 'alice');
  assert.deepStrictEqual((await ts.requests()).map((r) => [r.operation, r.status]), [['QueryEntity', 200]]);
});
