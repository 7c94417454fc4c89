// @azure/data-tables against tablestore serve --cosmos, at localhost
// without /devstoreaccount1, which the SDK takes for Cosmos DB: its Cosmos
// path, and the differences code written for Storage meets there.
"use strict";

const assert = require("node:assert/strict");
const { test } = require("node:test");
const { TableClient, TableServiceClient } = require("@azure/data-tables");

const cs = process.env.TABLES_COSMOS_CONNECTION_STRING;
if (!cs) {
  throw new Error("TABLES_COSMOS_CONNECTION_STRING is not set (see compat/js/run.sh)");
}
const options = { allowInsecureConnection: true, retryOptions: { maxRetries: 0 } };

async function rowKeys(iter) {
  const out = [];
  for await (const e of iter) out.push(e.rowKey);
  return out;
}

test("cosmos: order, property order, paging, limits, table name case, transactions", async () => {
  const name = "jscosmos" + (Date.now() % 1e9);
  const svc = TableServiceClient.fromConnectionString(cs, options);
  await svc.createTable(name);
  const tc = TableClient.fromConnectionString(cs, name, options);
  try {
    for (const rk of ["2", "10", "1"]) {
      await tc.createEntity({ partitionKey: "p", rowKey: rk, n: 1 });
    }
    await tc.updateEntity({ partitionKey: "p", rowKey: "1", m: 2 }, "Merge");
    assert.deepEqual(await rowKeys(tc.listEntities()), ["2", "10", "1"]);
    const e = await tc.getEntity("p", "1");
    const props = Object.keys(e).filter((k) => ["partitionKey", "rowKey", "n", "m"].includes(k));
    assert.deepEqual(props, ["partitionKey", "rowKey", "n", "m"]);
    const pages = [];
    for await (const page of tc.listEntities().byPage({ maxPageSize: 3 })) pages.push(page.length);
    assert.deepEqual(pages, [3, 0]);
    await assert.rejects(tc.createEntity({ partitionKey: "p", rowKey: "r".repeat(300) }), (err) => err.statusCode === 400);
    const upper = TableClient.fromConnectionString(cs, name.toUpperCase(), options);
    await assert.rejects(upper.getEntity("p", "1"), (err) => err.statusCode === 404);
    await tc.submitTransaction([
      ["upsert", { partitionKey: "p", rowKey: "9" }],
      ["delete", { partitionKey: "p", rowKey: "2" }],
    ]);
    assert.deepEqual(await rowKeys(tc.listEntities()), ["10", "1", "9"]);
    // A failed part, in Cosmos's shape, is the transaction's error.
    await assert.rejects(tc.submitTransaction([["create", { partitionKey: "p", rowKey: "1" }]]),
      (err) => err.statusCode === 409 && err.code === "EntityAlreadyExists");
  } finally {
    await svc.deleteTable(name);
  }
});
