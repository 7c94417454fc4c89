// Queries: filter through the odata helper, $select, top, and paging with
// byPage continuation tokens across several pages.
"use strict";

const assert = require("node:assert/strict");
const { odata } = require("@azure/data-tables");
const h = require("./helpers.js");

// load inserts n entities per partition in batches of up to 100.
async function load(c, partitions, perPartition) {
  for (const pk of partitions) {
    for (let start = 0; start < perPartition; start += 100) {
      const actions = [];
      for (let i = start; i < Math.min(perPartition, start + 100); i++) {
        actions.push(["create", { partitionKey: pk, rowKey: String(i).padStart(4, "0"), i, even: i % 2 === 0, tag: `t${i % 7}` }]);
      }
      await c.submitTransaction(actions);
    }
  }
}

h.scenario("query: filter, select and order across partitions", async (t) => {
  const c = await h.freshTable(t, "jsq");
  await load(c, ["a", "b"], 30);

  const rows = await h.collect(
    c.listEntities({
      queryOptions: { filter: odata`PartitionKey eq ${"b"} and i ge ${25} and even eq ${false}`, select: ["i", "tag"] },
    }),
  );
  // The selected properties came back, the others did not.
  assert.deepEqual(rows.map((e) => [e.i, e.tag, e.even]), [
    [25, "t4", undefined],
    [27, "t6", undefined],
    [29, "t1", undefined],
  ]);
  for (const e of rows) assert.ok(e.etag, "every selected entity still carries odata.etag");

  // Results come in (PartitionKey, RowKey) order.
  const all = await h.collect(c.listEntities({ queryOptions: { filter: odata`tag eq ${"t3"}` } }));
  const keys = all.map((e) => `${e.partitionKey}/${e.rowKey}`);
  assert.deepEqual(keys, [...keys].sort());
  assert.deepEqual(keys, ["a/0003", "a/0010", "a/0017", "a/0024", "b/0003", "b/0010", "b/0017", "b/0024"]);

  // A string comparison on RowKey ranges.
  const range = await h.collect(c.listEntities({ queryOptions: { filter: odata`PartitionKey eq ${"a"} and RowKey gt ${"0026"}` } }));
  assert.deepEqual(range.map((e) => e.rowKey), ["0027", "0028", "0029"]);

  // A malformed filter is a 400.
  await h.expectRestError(h.collect(c.listEntities({ queryOptions: { filter: "i eq" } })), 400);
});

h.scenario("query: the constant false answers nothing (the health-check probe), true everything", async (t) => {
  const c = await h.freshTable(t, "jshc");
  await load(c, ["a"], 5);
  assert.deepEqual(await h.collect(c.listEntities({ queryOptions: { filter: "false" } })), []);
  assert.equal((await h.collect(c.listEntities({ queryOptions: { filter: "true" } }))).length, 5);
  const folded = await h.collect(c.listEntities({ queryOptions: { filter: "(true and i ge 3) or false" } }));
  assert.deepEqual(folded.map((e) => e.i), [3, 4]);
  const svc = h.serviceClient();
  assert.deepEqual(await h.collect(svc.listTables({ queryOptions: { filter: "false" } })), []);
});

h.scenario("query: byPage continuation tokens across several pages", async (t) => {
  const c = await h.freshTable(t, "jspg");
  await load(c, ["p1", "p2", "p3"], 250);
  const total = 750;

  // Walk by hand with maxPageSize 100, resuming from each token.
  let token;
  const seen = [];
  let pages = 0;
  for (let guard = 0; guard < 20; guard++) {
    const iter = c.listEntities().byPage({ maxPageSize: 100, continuationToken: token });
    const { value: page, done } = await iter.next();
    if (done) break;
    pages++;
    assert.ok(page.length <= 100, `page of ${page.length}`);
    for (const e of page) seen.push(`${e.partitionKey}/${e.rowKey}`);
    token = page.continuationToken;
    if (!token) break;
  }
  assert.equal(seen.length, total);
  assert.equal(new Set(seen).size, total, "no entity twice");
  assert.deepEqual(seen, [...seen].sort());
  assert.ok(pages >= 8, `only ${pages} pages`);

  // A filtered walk: only even rows of p2, 125 of them, pages of 40.
  const filtered = await h.collect(
    c.listEntities({ queryOptions: { filter: odata`PartitionKey eq ${"p2"} and even eq ${true}` } }).byPage({ maxPageSize: 40 }),
  );
  assert.deepEqual(filtered.map((p) => p.length).slice(0, 3), [40, 40, 40]);
  assert.equal(filtered.flat().length, 125);
  assert.ok(filtered.flat().every((e) => e.partitionKey === "p2" && e.even === true));

  // The item iterator follows continuations by itself.
  const items = await h.collect(c.listEntities({ queryOptions: { select: ["RowKey"] } }));
  assert.equal(items.length, total);
});

h.scenario("query: top without paging returns the first rows only", async (t) => {
  const c = await h.freshTable(t, "jstop");
  await load(c, ["x"], 12);
  const iter = c.listEntities().byPage({ maxPageSize: 5 });
  const first = (await iter.next()).value;
  assert.deepEqual(first.map((e) => e.rowKey), ["0000", "0001", "0002", "0003", "0004"]);
  assert.ok(first.continuationToken, "a continuation token when more rows remain");
  const last = await h.collect(c.listEntities().byPage({ maxPageSize: 5, continuationToken: first.continuationToken }));
  assert.deepEqual(last.map((p) => p.length), [5, 2]);
  assert.equal(last[1].continuationToken, undefined);
});
