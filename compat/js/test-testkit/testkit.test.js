// The test kit's controls (tablestore serve --testkit, on the admin
// listener named by TABLES_TESTKIT_URL) driven beside @azure/data-tables:
// snapshot and restore, an injected ServerBusy the SDK retries, a SAS
// that expires when the server's clock moves on, and a reset.
"use strict";

const assert = require("node:assert/strict");
const { TableClient, generateTableSas } = require("@azure/data-tables");
const h = require("../test/helpers.js");

const controls = process.env.TABLES_TESTKIT_URL;
if (!controls) throw new Error("TABLES_TESTKIT_URL is not set (see compat/js/run.sh)");

// control calls a test control and returns [status, decoded JSON body].
async function control(method, path, body) {
  const res = await fetch(controls + path, {
    method,
    headers: { "Content-Type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return [res.status, text ? JSON.parse(text) : null];
}

h.scenario("testkit: snapshot, change, restore", async (t) => {
  const c = await h.freshTable(t, "jskit");
  await c.createEntity({ partitionKey: "p", rowKey: "1", n: 1 });
  assert.equal((await control("PUT", "/snapshots/js-one"))[0], 201);
  await c.deleteEntity("p", "1");
  await c.createEntity({ partitionKey: "p", rowKey: "2", n: 2 });
  assert.equal((await control("POST", "/snapshots/js-one/restore"))[0], 200);
  const rows = (await h.collect(c.listEntities())).map((e) => e.rowKey);
  assert.deepEqual(rows, ["1"]);
  const [status, body] = await control("POST", "/snapshots/nosuch/restore");
  assert.equal(status, 404);
  assert.match(body["odata.error"].message.value, /nosuch/);
});

h.scenario("testkit: ServerBusy answered twice, retried by the SDK", async (t) => {
  const c = await h.freshTable(t, "jsbusy");
  await c.createEntity({ partitionKey: "p", rowKey: "1", n: 1 });
  await control("DELETE", "/requests");
  const [status, added] = await control("POST", "/faults", {
    operation: "QueryEntity",
    table: c.tableName,
    code: "ServerBusy",
    times: 2,
    retry_after: "20ms",
  });
  assert.equal(status, 201);
  t.after(() => control("DELETE", `/faults/${added.id}`));
  const retrying = TableClient.fromConnectionString(process.env.TABLES_CONNECTION_STRING, c.tableName, {
    allowInsecureConnection: true,
    retryOptions: { maxRetries: 3 },
  });
  const started = Date.now();
  assert.equal((await retrying.getEntity("p", "1")).n, 1);
  assert.ok(Date.now() - started < 3000, "the SDK waited longer than the fault's retry-after");
  const [, log] = await control("GET", "/requests");
  const gets = log.requests.filter((r) => r.operation === "QueryEntity").map((r) => r.status);
  assert.deepEqual(gets, [503, 503, 200]);
  const [bad, err] = await control("POST", "/faults", { operation: "QueryEntity", status: 418 });
  assert.equal(bad, 400);
  assert.match(err["odata.error"].message.value, /Fault\.Status/);
});

h.scenario("testkit: the server's clock expires a SAS and stamps Timestamps", async (t) => {
  const c = await h.freshTable(t, "jsclock");
  await c.createEntity({ partitionKey: "p", rowKey: "1", n: 1 });
  const now = new Date((await control("GET", "/clock"))[1].now);
  const sas = generateTableSas(c.tableName, h.credential, {
    permissions: { query: true },
    expiresOn: new Date(now.getTime() + 3600 * 1000),
  });
  const reader = h.sasTableClient(c.tableName, sas);
  assert.equal((await reader.getEntity("p", "1")).n, 1);
  const [status] = await control("POST", "/clock", { advance: "2h" });
  assert.equal(status, 200);
  t.after(() => control("POST", "/clock", { set: new Date().toISOString() }));
  await h.expectRestError(reader.getEntity("p", "1"), 403);
  await c.upsertEntity({ partitionKey: "p", rowKey: "2" });
  const stamp = new Date((await c.getEntity("p", "2")).timestamp);
  assert.ok(stamp - now > 110 * 60 * 1000, `timestamp ${stamp.toISOString()} not two hours after ${now.toISOString()}`);
  const [bad, err] = await control("POST", "/clock", { set: "next tuesday" });
  assert.equal(bad, 400);
  assert.match(err["odata.error"].message.value, /set/);
});

h.scenario("testkit: reset empties the store", async () => {
  const svc = h.serviceClient();
  await svc.createTable(h.tableName("jsreset"));
  assert.equal((await control("POST", "/reset"))[0], 200);
  assert.deepEqual(await h.collect(svc.listTables()), []);
});
