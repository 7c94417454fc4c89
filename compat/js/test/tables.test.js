// Table operations: create, list (filter, paging), delete.
"use strict";

const assert = require("node:assert/strict");
const { odata } = require("@azure/data-tables");
const h = require("./helpers.js");

h.scenario("tables: create, list by name, create again, delete", async () => {
  const svc = h.serviceClient();
  const name = h.tableName("jst");
  await svc.createTable(name);
  try {
    const found = await h.collect(svc.listTables({ queryOptions: { filter: odata`TableName eq ${name}` } }));
    assert.deepEqual(
      found.map((x) => x.name),
      [name],
    );

    // The SDK swallows a 409 only when the code is TableAlreadyExists, so
    // any other answer to a second create throws here.
    let status;
    await svc.createTable(name, {
      onResponse: (r) => {
        status = r.status;
      },
    });
    assert.equal(status, 409, "second create of the same table");
  } finally {
    await svc.deleteTable(name);
  }
  const after = await h.collect(svc.listTables({ queryOptions: { filter: odata`TableName eq ${name}` } }));
  assert.deepEqual(after, []);

  // The table is gone: entity operations report TableNotFound.
  await h.expectRestError(h.tableClient(name).createEntity({ partitionKey: "p", rowKey: "r" }), 404, "TableNotFound");

  // Deleting again is a 404 the SDK hides; the status must still be 404.
  let status;
  await svc.deleteTable(name, {
    onResponse: (r) => {
      status = r.status;
    },
  });
  assert.equal(status, 404, "delete of a missing table");
});

h.scenario("tables: invalid name is refused with 400", async () => {
  const svc = h.serviceClient();
  await h.expectRestError(svc.createTable("1-not-valid"), 400, "InvalidResourceName");
});

h.scenario("tables: list pages with byPage continuation tokens", async (t) => {
  const svc = h.serviceClient();
  const prefix = h.tableName("jsp");
  const names = [];
  for (let i = 0; i < 5; i++) names.push(`${prefix}x${i}`);
  for (const n of names) await svc.createTable(n);
  t.after(async () => {
    for (const n of names) await svc.deleteTable(n).catch(() => {});
  });

  const filter = odata`TableName ge ${prefix} and TableName lt ${prefix + "y"}`;
  const pages = [];
  let token;
  for (let guard = 0; guard < 10; guard++) {
    const iter = svc.listTables({ queryOptions: { filter } }).byPage({ maxPageSize: 2, continuationToken: token });
    const { value: page, done } = await iter.next();
    if (done) break;
    pages.push(page.map((x) => x.name));
    token = page.continuationToken;
    if (!token) break;
  }
  assert.deepEqual(pages, [names.slice(0, 2), names.slice(2, 4), names.slice(4)]);

  // The plain iterator walks the same pages itself.
  const all = await h.collect(svc.listTables({ queryOptions: { filter } }).byPage({ maxPageSize: 2 }));
  assert.deepEqual(all.flat().map((x) => x.name), names);
});

h.scenario("tables: names are case-insensitive", async (t) => {
  const svc = h.serviceClient();
  const name = h.tableName("JsCase");
  await svc.createTable(name);
  t.after(() => svc.deleteTable(name).catch(() => {}));
  let status;
  await svc.createTable(name.toLowerCase(), {
    onResponse: (r) => {
      status = r.status;
    },
  });
  assert.equal(status, 409, "a name differing only in case exists already");
  const lower = h.tableClient(name.toLowerCase());
  await lower.createEntity({ partitionKey: "p", rowKey: "r" });
  assert.equal((await h.collect(h.tableClient(name).listEntities())).length, 1);
});
