// Entity operations: insert, get, update (merge/replace, etag and "*"),
// upsert, delete, and the 404/409/412 errors.
"use strict";

const assert = require("node:assert/strict");
const h = require("./helpers.js");

h.scenario("entities: insert, get, duplicate insert is 409", async (t) => {
  const c = await h.freshTable(t, "jse");
  const created = await c.createEntity({ partitionKey: "p1", rowKey: "r1", name: "ann", n: 7 });
  assert.match(created.etag, /^W\/"datetime'.+'"$/);

  const got = await c.getEntity("p1", "r1");
  assert.equal(got.partitionKey, "p1");
  assert.equal(got.rowKey, "r1");
  assert.equal(got.name, "ann");
  assert.equal(got.n, 7);
  assert.equal(got.etag, created.etag);
  assert.ok(typeof got.timestamp === "string" && got.timestamp.endsWith("Z"), `timestamp ${got.timestamp}`);

  await h.expectRestError(c.createEntity({ partitionKey: "p1", rowKey: "r1" }), 409, "EntityAlreadyExists");
  await h.expectRestError(c.getEntity("p1", "nope"), 404, "ResourceNotFound");

  const selected = await c.getEntity("p1", "r1", { queryOptions: { select: ["name"] } });
  assert.equal(selected.name, "ann");
  assert.equal(selected.n, undefined);
});

h.scenario("entities: keys with quotes, spaces and non-ASCII round-trip", async (t) => {
  const c = await h.freshTable(t, "jsk");
  const keys = [
    ["it's", "a 'quoted' key"],
    ["space key", "ünïcødé ✓"],
    ["plus+and&", "percent%20"],
  ];
  for (const [pk, rk] of keys) await c.createEntity({ partitionKey: pk, rowKey: rk, v: `${pk}|${rk}` });
  for (const [pk, rk] of keys) {
    const e = await c.getEntity(pk, rk);
    assert.equal(e.v, `${pk}|${rk}`);
    await c.updateEntity({ partitionKey: pk, rowKey: rk, w: 1 }, "Merge");
    await c.deleteEntity(pk, rk);
  }
});

h.scenario("entities: update merge and replace, with etag and with *", async (t) => {
  const c = await h.freshTable(t, "jsu");
  const first = await c.createEntity({ partitionKey: "p", rowKey: "r", a: "a1", b: "b1" });

  // Merge with the current etag keeps b.
  const merged = await c.updateEntity({ partitionKey: "p", rowKey: "r", a: "a2" }, "Merge", { etag: first.etag });
  assert.ok(merged.etag && merged.etag !== first.etag, "merge returns a new etag");
  let e = await c.getEntity("p", "r");
  assert.deepEqual([e.a, e.b], ["a2", "b1"]);

  // The old etag no longer matches, for merge, replace and delete.
  await h.expectRestError(
    c.updateEntity({ partitionKey: "p", rowKey: "r", a: "x" }, "Merge", { etag: first.etag }),
    412,
    "UpdateConditionNotSatisfied",
  );
  await h.expectRestError(
    c.updateEntity({ partitionKey: "p", rowKey: "r", a: "x" }, "Replace", { etag: first.etag }),
    412,
    "UpdateConditionNotSatisfied",
  );
  await h.expectRestError(c.deleteEntity("p", "r", { etag: first.etag }), 412, "UpdateConditionNotSatisfied");
  e = await c.getEntity("p", "r");
  assert.deepEqual([e.a, e.b], ["a2", "b1"], "failed conditional writes left the entity alone");

  // Replace with the current etag drops b.
  const replaced = await c.updateEntity({ partitionKey: "p", rowKey: "r", c: "c3" }, "Replace", {
    etag: merged.etag,
  });
  e = await c.getEntity("p", "r");
  assert.deepEqual([e.a, e.b, e.c], [undefined, undefined, "c3"]);
  assert.equal(e.etag, replaced.etag);

  // "*" matches any version.
  await c.updateEntity({ partitionKey: "p", rowKey: "r", d: 4 }, "Merge", { etag: "*" });
  await c.updateEntity({ partitionKey: "p", rowKey: "r", d: 5 }, "Replace", { etag: "*" });
  e = await c.getEntity("p", "r");
  assert.deepEqual([e.c, e.d], [undefined, 5]);

  // Updating a missing entity is 404, with or without etag.
  await h.expectRestError(c.updateEntity({ partitionKey: "p", rowKey: "missing", a: 1 }, "Merge"), 404, "ResourceNotFound");
  await h.expectRestError(
    c.updateEntity({ partitionKey: "p", rowKey: "missing", a: 1 }, "Replace", { etag: first.etag }),
    404,
    "ResourceNotFound",
  );
});

h.scenario("entities: upsert merge and replace", async (t) => {
  const c = await h.freshTable(t, "jsup");
  await c.upsertEntity({ partitionKey: "p", rowKey: "m", a: 1 }, "Merge");
  await c.upsertEntity({ partitionKey: "p", rowKey: "m", b: 2 }, "Merge");
  let e = await c.getEntity("p", "m");
  assert.deepEqual([e.a, e.b], [1, 2]);

  await c.upsertEntity({ partitionKey: "p", rowKey: "x", a: 1 }, "Replace");
  await c.upsertEntity({ partitionKey: "p", rowKey: "x", b: 2 }, "Replace");
  e = await c.getEntity("p", "x");
  assert.deepEqual([e.a, e.b], [undefined, 2]);
});

h.scenario("entities: delete with etag, with *, and of a missing entity", async (t) => {
  const c = await h.freshTable(t, "jsd");
  const a = await c.createEntity({ partitionKey: "p", rowKey: "a" });
  await c.createEntity({ partitionKey: "p", rowKey: "b" });
  await c.deleteEntity("p", "a", { etag: a.etag });
  await c.deleteEntity("p", "b");
  await h.expectRestError(c.getEntity("p", "a"), 404, "ResourceNotFound");
  await h.expectRestError(c.deleteEntity("p", "a"), 404, "ResourceNotFound");
});

h.scenario("entities: bad input is a 400 and stores nothing", async (t) => {
  const c = await h.freshTable(t, "jsbad");
  // A slash is not allowed in keys (Azure's code for it varies).
  await h.expectRestError(c.createEntity({ partitionKey: "a/b", rowKey: "r" }), 400);
  // Property names must be valid identifiers.
  await h.expectRestError(c.createEntity({ partitionKey: "p", rowKey: "r", "bad name": 1 }), 400, "PropertyNameInvalid");
  // A property value over 64 KiB.
  await h.expectRestError(c.createEntity({ partitionKey: "p", rowKey: "r", big: "x".repeat(40000) }), 400, "PropertyValueTooLarge");
  const left = await h.collect(c.listEntities());
  assert.deepEqual(left, []);
});

h.scenario("entities: Azure's limits on keys, properties and size", async (t) => {
  const c = await h.freshTable(t, "jslim");
  for (const bad of ["a#b", "a?b", "a\\b"]) {
    await h.expectRestError(c.createEntity({ partitionKey: bad, rowKey: "r" }), 400);
    await h.expectRestError(c.createEntity({ partitionKey: "p", rowKey: bad }), 400);
  }
  // 252 custom properties are allowed, 253 are not.
  const wide = { partitionKey: "p", rowKey: "wide" };
  for (let i = 0; i < 252; i++) wide[`p${i}`] = i;
  await c.createEntity(wide);
  assert.equal(Object.keys(await c.getEntity("p", "wide")).filter((k) => k.startsWith("p") && k !== "partitionKey").length, 252);
  await h.expectRestError(c.createEntity({ ...wide, rowKey: "wider", p252: 1 }), 400, "TooManyProperties");
  // An entity over 1 MiB.
  const huge = { partitionKey: "p", rowKey: "huge" };
  for (let i = 0; i < 17; i++) huge[`s${i}`] = "y".repeat(32000);
  await h.expectRestError(c.createEntity(huge), 400, "EntityTooLarge");
  // DateTime before 1601 is out of range.
  await h.expectRestError(c.createEntity({ partitionKey: "p", rowKey: "old", d: new Date("1600-12-31T00:00:00Z") }), 400);
  const keys = (await h.collect(c.listEntities())).map((e) => e.rowKey);
  assert.deepEqual(keys, ["wide"]);
});

h.scenario("entities: empty PartitionKey and RowKey, as Azure allows", async (t) => {
  const c = await h.freshTable(t, "jsempty");
  await c.upsertEntity({ partitionKey: "p", rowKey: "", n: 1 }, "Replace");
  await c.createEntity({ partitionKey: "", rowKey: "", n: 2 });
  await c.createEntity({ partitionKey: "", rowKey: "r", n: 3 });
  await h.expectRestError(c.createEntity({ partitionKey: "", rowKey: "" }), 409, "EntityAlreadyExists");
  assert.equal((await c.getEntity("p", "")).n, 1);
  const both = await c.getEntity("", "");
  assert.deepEqual([both.partitionKey, both.rowKey, both.n], ["", "", 2]);
  await c.updateEntity({ partitionKey: "", rowKey: "", m: 1 }, "Merge");
  assert.equal((await c.getEntity("", "")).m, 1);
  await c.submitTransaction([
    ["upsert", { partitionKey: "", rowKey: "b", n: 4 }],
    ["update", { partitionKey: "", rowKey: "r", n: 5 }, "Replace"],
    ["delete", { partitionKey: "", rowKey: "" }],
  ]);
  const rows = [];
  for await (const e of c.listEntities({ queryOptions: { filter: "PartitionKey eq ''" } })) {
    rows.push([e.partitionKey, e.rowKey, e.n]);
  }
  assert.deepEqual(rows, [["", "b", 4], ["", "r", 5]]);
  const pages = [];
  for await (const page of c.listEntities().byPage({ maxPageSize: 1 })) {
    if (page.length) pages.push(page.map((e) => [e.partitionKey, e.rowKey]));
  }
  assert.deepEqual(pages, [[["", "b"]], [["", "r"]], [["p", ""]]]);
  await c.deleteEntity("p", "");
  await h.expectRestError(c.getEntity("p", ""), 404, "ResourceNotFound");
});
