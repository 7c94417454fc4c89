// Entity group transactions: every action type, atomic failure with the
// failing index, and the SDK's parsing of sub-responses.
"use strict";

const assert = require("node:assert/strict");
const { TableTransaction } = require("@azure/data-tables");
const h = require("./helpers.js");

h.scenario("transaction: every action type succeeds together", async (t) => {
  const c = await h.freshTable(t, "jstx");
  const m = await c.createEntity({ partitionKey: "p", rowKey: "merge", a: 1, keep: "k" });
  await c.createEntity({ partitionKey: "p", rowKey: "replace", a: 1, gone: "g" });
  await c.createEntity({ partitionKey: "p", rowKey: "delete" });
  await c.createEntity({ partitionKey: "p", rowKey: "upmerge", a: 1, keep: "k" });

  const tx = new TableTransaction();
  tx.createEntity({ partitionKey: "p", rowKey: "new", a: 1, big: 7n, when: new Date("2020-01-01T00:00:00Z") });
  tx.updateEntity({ partitionKey: "p", rowKey: "merge", a: 2 }, "Merge", { etag: m.etag });
  tx.updateEntity({ partitionKey: "p", rowKey: "replace", a: 2 }, "Replace");
  tx.deleteEntity("p", "delete");
  tx.upsertEntity({ partitionKey: "p", rowKey: "upmerge", a: 2 }, "Merge");
  tx.upsertEntity({ partitionKey: "p", rowKey: "upreplace", a: 2 }, "Replace");
  const res = await c.submitTransaction(tx.actions);

  assert.equal(res.status, 202);
  assert.equal(res.subResponses.length, 6);
  assert.deepEqual(
    res.subResponses.slice(1).map((r) => r.status),
    [204, 204, 204, 204, 204],
  );
  assert.ok([201, 204].includes(res.subResponses[0].status), `insert status ${res.subResponses[0].status}`);
  // The SDK reads a part's row key from its Location header, which Azure
  // sends for inserts; other parts may or may not carry one.
  const want = ["new", "merge", "replace", "delete", "upmerge", "upreplace"];
  assert.equal(res.subResponses[0].rowKey, "new");
  res.subResponses.forEach((r, i) => assert.ok(r.rowKey === undefined || r.rowKey === want[i], `row key of part ${i}: ${r.rowKey}`));
  for (const i of [0, 1, 2, 4, 5]) assert.match(res.subResponses[i].etag || "", /^W\/"datetime'/, `etag of part ${i}`);
  assert.equal(res.getResponseForEntity("new").status, res.subResponses[0].status);

  const rows = await h.collect(c.listEntities());
  const byKey = Object.fromEntries(rows.map((e) => [e.rowKey, e]));
  assert.deepEqual(Object.keys(byKey).sort(), ["merge", "new", "replace", "upmerge", "upreplace"]);
  assert.deepEqual([byKey.merge.a, byKey.merge.keep], [2, "k"]);
  assert.deepEqual([byKey.replace.a, byKey.replace.gone], [2, undefined]);
  assert.deepEqual([byKey.upmerge.a, byKey.upmerge.keep], [2, "k"]);
  assert.equal(byKey.new.big, 7n);
  assert.equal(byKey.merge.etag, res.subResponses[1].etag);
  assert.equal(byKey.new.etag, res.subResponses[0].etag);
});

h.scenario("transaction: a failure rolls back and names the failing index", async (t) => {
  const c = await h.freshTable(t, "jstxf");
  await c.createEntity({ partitionKey: "p", rowKey: "exists", v: "before" });

  const err = await h.expectRestError(
    c.submitTransaction([
      ["create", { partitionKey: "p", rowKey: "a" }],
      ["upsert", { partitionKey: "p", rowKey: "b", v: "after" }, "Merge"],
      ["create", { partitionKey: "p", rowKey: "exists" }],
      ["create", { partitionKey: "p", rowKey: "c" }],
    ]),
    409,
    "EntityAlreadyExists",
  );
  assert.match(err.message, /^2:/, `message ${JSON.stringify(err.message)}`);
  const rows = await h.collect(c.listEntities());
  assert.deepEqual(rows.map((e) => [e.rowKey, e.v]), [["exists", "before"]], "nothing applied");

  // Each failing action type reports its own status and index.
  const stale = `W/"datetime'2000-01-01T00%3A00%3A00.0000000Z'"`;
  await h.expectRestError(
    c.submitTransaction([
      ["upsert", { partitionKey: "p", rowKey: "c" }],
      ["update", { partitionKey: "p", rowKey: "missing", v: 1 }, "Replace"],
    ]),
    404,
    "ResourceNotFound",
  ).then((e) => assert.match(e.message, /^1:/));
  await h.expectRestError(
    c.submitTransaction([["update", { partitionKey: "p", rowKey: "exists", v: 1 }, "Merge", { etag: stale }]]),
    412,
    "UpdateConditionNotSatisfied",
  ).then((e) => assert.match(e.message, /^0:/));
  await h.expectRestError(
    c.submitTransaction([
      ["create", { partitionKey: "p", rowKey: "d" }],
      ["delete", { partitionKey: "p", rowKey: "missing" }],
    ]),
    404,
    "ResourceNotFound",
  ).then((e) => assert.match(e.message, /^1:/));
  const after = await h.collect(c.listEntities());
  assert.deepEqual(after.map((e) => [e.rowKey, e.v]), [["exists", "before"]], "nothing applied");
});

h.scenario("transaction: batch rules (partition, duplicates, size)", async (t) => {
  const c = await h.freshTable(t, "jstxr");
  // The SDK refuses a second partition key itself, before sending.
  await assert.rejects(
    c.submitTransaction([
      ["create", { partitionKey: "p", rowKey: "a" }],
      ["create", { partitionKey: "q", rowKey: "b" }],
    ]),
    /same partitionKey/,
  );
  await h.expectRestError(
    c.submitTransaction([
      ["create", { partitionKey: "p", rowKey: "a" }],
      ["upsert", { partitionKey: "p", rowKey: "a" }],
    ]),
    400,
    "InvalidDuplicateRow",
  ).then((e) => assert.match(e.message, /^1:/));
  const tooMany = [];
  for (let i = 0; i < 101; i++) tooMany.push(["create", { partitionKey: "p", rowKey: `r${i}` }]);
  await h.expectRestError(c.submitTransaction(tooMany), 400, "InvalidInput");

  // A transaction on a missing table is a 404 TableNotFound.
  await h.expectRestError(
    h.tableClient(h.tableName("jsnone")).submitTransaction([["create", { partitionKey: "p", rowKey: "a" }]]),
    404,
    "TableNotFound",
  );
  assert.deepEqual(await h.collect(c.listEntities()), []);

  // Exactly 100 is fine.
  const hundred = tooMany.slice(0, 100);
  const res = await c.submitTransaction(hundred);
  assert.equal(res.subResponses.length, 100);
  assert.equal((await h.collect(c.listEntities())).length, 100);
});
