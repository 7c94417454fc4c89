// Stored access policies and shared access signatures made by the SDK.
"use strict";

const assert = require("node:assert/strict");
const { AzureNamedKeyCredential, generateAccountSas, generateTableSas, odata } = require("@azure/data-tables");
const h = require("./helpers.js");

const minute = 60 * 1000;
const past = () => new Date(Date.now() - 5 * minute);
const future = () => new Date(Date.now() + 60 * minute);

h.scenario("acl: set, get and clear stored access policies", async (t) => {
  const c = await h.freshTable(t, "jsacl");
  const start = new Date("2024-01-01T00:00:00Z");
  const expiry = new Date("2099-12-31T23:59:59Z");
  await c.setAccessPolicy([
    { id: "readers", accessPolicy: { start, expiry, permission: "r" } },
    { id: "writers", accessPolicy: { start, expiry, permission: "raud" } },
  ]);
  const got = await c.getAccessPolicy();
  const ids = got.map((s) => s.id).sort();
  assert.deepEqual(ids, ["readers", "writers"]);
  const readers = got.find((s) => s.id === "readers");
  assert.equal(readers.accessPolicy.permission, "r");
  assert.equal(readers.accessPolicy.start.toISOString(), start.toISOString());
  assert.equal(readers.accessPolicy.expiry.toISOString(), expiry.toISOString());

  await c.setAccessPolicy([]);
  const cleared = await c.getAccessPolicy();
  assert.deepEqual(Array.from(cleared), []);

  // More than five identifiers are refused.
  const six = [];
  for (let i = 0; i < 6; i++) six.push({ id: `id${i}`, accessPolicy: { permission: "r", expiry: future() } });
  await h.expectRestError(c.setAccessPolicy(six), 400);
});

h.scenario("acl: a policy may leave start and expiry to the SAS", async (t) => {
  const c = await h.freshTable(t, "jsaclp");
  await c.createEntity({ partitionKey: "p", rowKey: "r", v: 1 });
  await c.setAccessPolicy([{ id: "permonly", accessPolicy: { permission: "r" } }]);
  const got = await c.getAccessPolicy();
  assert.deepEqual(got.map((s) => [s.id, s.accessPolicy?.permission]), [["permonly", "r"]]);
  const sas = generateTableSas(c.tableName, h.credential, { identifier: "permonly", expiresOn: future() });
  assert.equal((await h.sasTableClient(c.tableName, sas).getEntity("p", "r")).v, 1);
});

h.scenario("sas: table SAS permissions are enforced", async (t) => {
  const c = await h.freshTable(t, "jssas");
  await c.createEntity({ partitionKey: "p", rowKey: "r0", v: 0 });

  const readOnly = h.sasTableClient(
    c.tableName,
    generateTableSas(c.tableName, h.credential, { permissions: { query: true }, startsOn: past(), expiresOn: future() }),
  );
  assert.equal((await readOnly.getEntity("p", "r0")).v, 0);
  assert.equal((await h.collect(readOnly.listEntities())).length, 1);
  await h.expectRestError(readOnly.createEntity({ partitionKey: "p", rowKey: "r1" }), 403);
  await h.expectRestError(readOnly.deleteEntity("p", "r0"), 403);
  await h.expectRestError(readOnly.updateEntity({ partitionKey: "p", rowKey: "r0", v: 9 }, "Merge"), 403);

  // Add without update cannot upsert.
  const addOnly = h.sasTableClient(
    c.tableName,
    generateTableSas(c.tableName, h.credential, { permissions: { add: true }, expiresOn: future() }),
  );
  await addOnly.createEntity({ partitionKey: "p", rowKey: "r1", v: 1 });
  await h.expectRestError(addOnly.upsertEntity({ partitionKey: "p", rowKey: "r2" }, "Merge"), 403);
  await h.expectRestError(addOnly.getEntity("p", "r1"), 403);

  const all = h.sasTableClient(
    c.tableName,
    generateTableSas(c.tableName, h.credential, {
      permissions: { query: true, add: true, update: true, delete: true },
      expiresOn: future(),
    }),
  );
  await all.upsertEntity({ partitionKey: "p", rowKey: "r2", v: 2 }, "Replace");
  await all.updateEntity({ partitionKey: "p", rowKey: "r1", v: 11 }, "Merge");
  await all.deleteEntity("p", "r0");
  // A transaction carries the SAS on the outer request and the parts.
  const res = await all.submitTransaction([
    ["create", { partitionKey: "p", rowKey: "r3", v: 3 }],
    ["delete", { partitionKey: "p", rowKey: "r2" }],
  ]);
  assert.equal(res.subResponses.length, 2);
  const rows = await h.collect(c.listEntities());
  assert.deepEqual(rows.map((e) => [e.rowKey, e.v]), [
    ["r1", 11],
    ["r3", 3],
  ]);

  // A read-only SAS cannot write through a transaction either.
  await h.expectRestError(readOnly.submitTransaction([["create", { partitionKey: "p", rowKey: "r4" }]]), 403);

  // The SAS names one table.
  const other = await h.freshTable(t, "jssaso");
  const wrongTable = h.sasTableClient(
    other.tableName,
    generateTableSas(c.tableName, h.credential, { permissions: { query: true }, expiresOn: future() }),
  );
  await h.expectRestError(h.collect(wrongTable.listEntities()), 403);
});

h.scenario("sas: expired, not yet valid, and wrongly signed tokens are refused", async (t) => {
  const c = await h.freshTable(t, "jssasx");
  await c.createEntity({ partitionKey: "p", rowKey: "r" });
  const expired = generateTableSas(c.tableName, h.credential, {
    permissions: { query: true },
    startsOn: new Date(Date.now() - 120 * minute),
    expiresOn: new Date(Date.now() - 60 * minute),
  });
  await h.expectRestError(h.sasTableClient(c.tableName, expired).getEntity("p", "r"), 403);

  const early = generateTableSas(c.tableName, h.credential, {
    permissions: { query: true },
    startsOn: new Date(Date.now() + 60 * minute),
    expiresOn: new Date(Date.now() + 120 * minute),
  });
  await h.expectRestError(h.sasTableClient(c.tableName, early).getEntity("p", "r"), 403);

  const wrongKey = new AzureNamedKeyCredential(h.account, Buffer.from("not the account key").toString("base64"));
  const forged = generateTableSas(c.tableName, wrongKey, { permissions: { query: true }, expiresOn: future() });
  await h.expectRestError(h.sasTableClient(c.tableName, forged).getEntity("p", "r"), 403);
});

h.scenario("sas: key ranges limit reads and writes", async (t) => {
  const c = await h.freshTable(t, "jssask");
  for (const pk of ["a", "b", "c", "d"]) await c.createEntity({ partitionKey: pk, rowKey: "1" });
  const ranged = h.sasTableClient(
    c.tableName,
    generateTableSas(c.tableName, h.credential, {
      permissions: { query: true, add: true, update: true, delete: true },
      expiresOn: future(),
      startPartitionKey: "b",
      endPartitionKey: "c",
    }),
  );
  await ranged.getEntity("b", "1");
  await ranged.getEntity("c", "1");
  await h.expectRestError(ranged.getEntity("a", "1"), 403);
  await h.expectRestError(ranged.getEntity("d", "1"), 403);
  await ranged.createEntity({ partitionKey: "b", rowKey: "2" });
  await h.expectRestError(ranged.createEntity({ partitionKey: "e", rowKey: "2" }), 403);
  await h.expectRestError(ranged.deleteEntity("a", "1"), 403);
  const rows = await h.collect(c.listEntities());
  assert.deepEqual(rows.map((e) => `${e.partitionKey}${e.rowKey}`), ["a1", "b1", "b2", "c1", "d1"]);
});

h.scenario("sas: stored access policy backs a SAS until it is removed", async (t) => {
  const c = await h.freshTable(t, "jssasp");
  await c.createEntity({ partitionKey: "p", rowKey: "r", v: 1 });
  await c.setAccessPolicy([{ id: "readers", accessPolicy: { permission: "r", start: past(), expiry: future() } }]);
  const viaPolicy = h.sasTableClient(c.tableName, generateTableSas(c.tableName, h.credential, { identifier: "readers" }));
  assert.equal((await viaPolicy.getEntity("p", "r")).v, 1);
  await h.expectRestError(viaPolicy.createEntity({ partitionKey: "p", rowKey: "s" }), 403);

  await c.setAccessPolicy([]);
  await h.expectRestError(viaPolicy.getEntity("p", "r"), 403);
});

h.scenario("sas: account SAS for tables and entities", async (t) => {
  const listOnly = h.sasServiceClient(
    generateAccountSas(h.credential, {
      permissions: { list: true, query: true },
      resourceTypes: "sco",
      startsOn: past(),
      expiresOn: future(),
    }),
  );
  const name = h.tableName("jsacc");
  await h.expectRestError(listOnly.createTable(name), 403);

  const full = generateAccountSas(h.credential, {
    permissions: { list: true, query: true, add: true, write: true, update: true, delete: true },
    resourceTypes: "sco",
    expiresOn: future(),
  });
  const svc = h.sasServiceClient(full);
  await svc.createTable(name);
  t.after(() => h.tableClient(name).deleteTable().catch(() => {}));
  const found = await h.collect(listOnly.listTables({ queryOptions: { filter: odata`TableName eq ${name}` } }));
  assert.deepEqual(found.map((x) => x.name), [name]);

  const tc = h.sasTableClient(name, full);
  await tc.createEntity({ partitionKey: "p", rowKey: "r", v: 1 });
  assert.equal((await tc.getEntity("p", "r")).v, 1);
  const readerOnTable = h.sasTableClient(name, generateAccountSas(h.credential, { permissions: { query: true }, resourceTypes: "o", expiresOn: future() }));
  assert.equal((await readerOnTable.getEntity("p", "r")).v, 1);
  await h.expectRestError(readerOnTable.createEntity({ partitionKey: "p", rowKey: "s" }), 403);
  await svc.deleteTable(name);
});
