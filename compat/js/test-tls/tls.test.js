// The SDK over https: run.sh starts a second server with --cert/--key
// and gives Node the test CA through NODE_EXTRA_CA_CERTS, the way a Node
// program trusts a private CA. The clients here never allow insecure
// connections.
"use strict";

const assert = require("node:assert/strict");
const { test } = require("node:test");
const { TableClient, TableServiceClient, TableTransaction } = require("@azure/data-tables");

const cs = process.env.TABLES_CONNECTION_STRING;
if (!cs || !cs.startsWith("DefaultEndpointsProtocol=https;")) {
  throw new Error("TABLES_CONNECTION_STRING must name an https endpoint (run.sh sets it)");
}
const opts = { retryOptions: { maxRetries: 0 } };

test("tls: tables, entities, query paging and a transaction over https", async () => {
  const name = `jstls${Date.now() % 1e9}`;
  const svc = TableServiceClient.fromConnectionString(cs, opts);
  await svc.createTable(name);
  const client = TableClient.fromConnectionString(cs, name, opts);
  try {
    await client.createEntity({ partitionKey: "p", rowKey: "1", n: 1 });
    const tx = new TableTransaction();
    tx.createEntity({ partitionKey: "p", rowKey: "2", n: 2 });
    tx.updateEntity({ partitionKey: "p", rowKey: "1", n: 3 }, "Merge");
    await client.submitTransaction(tx.actions);
    const got = await client.getEntity("p", "1");
    assert.equal(got.n, 3);
    const pages = [];
    for await (const page of client.listEntities().byPage({ maxPageSize: 1 })) pages.push(page.length);
    assert.deepEqual(pages.filter((n) => n > 0), [1, 1]);
    const props = await svc.getProperties();
    assert.ok(props, "service properties over https");
  } finally {
    await svc.deleteTable(name);
  }
});

test("tls: an http client of the https port gets no table data", async () => {
  const insecure = cs.replace("DefaultEndpointsProtocol=https", "DefaultEndpointsProtocol=http").replace("TableEndpoint=https://", "TableEndpoint=http://");
  const svc = TableServiceClient.fromConnectionString(insecure, { ...opts, allowInsecureConnection: true });
  await assert.rejects(async () => {
    for await (const t of svc.listTables()) void t;
  });
});
