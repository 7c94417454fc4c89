// What the SDK sees on the wire: statuses, headers it relies on, and the
// verb rewrite it applies for endpoints it takes for Cosmos DB.
"use strict";

const assert = require("node:assert/strict");
const { TableClient } = require("@azure/data-tables");
const h = require("./helpers.js");

// onResponse collects the raw response of one call.
function capture() {
  const got = {};
  return {
    got,
    options: {
      onResponse: (r) => {
        got.status = r.status;
        got.headers = r.headers;
        got.body = r.bodyAsText;
      },
    },
  };
}

h.scenario("protocol: statuses and headers the SDK reads", async (t) => {
  const c = await h.freshTable(t, "jsproto");

  // createEntity sends Prefer: return-no-content.
  let x = capture();
  const created = await c.createEntity({ partitionKey: "p", rowKey: "r", v: 1 }, x.options);
  assert.equal(x.got.status, 204);
  assert.equal(x.got.headers.get("preference-applied"), "return-no-content");
  assert.equal(x.got.headers.get("etag"), created.etag);
  assert.ok(x.got.headers.get("x-ms-request-id"), "x-ms-request-id");
  assert.ok(x.got.headers.get("x-ms-version"), "x-ms-version");
  const date = x.got.headers.get("date");
  assert.ok(date && !Number.isNaN(Date.parse(date)) && date.endsWith("GMT"), `Date ${date}`);

  // The client request id comes back.
  x = capture();
  await c.getEntity("p", "r", { ...x.options, requestOptions: { customHeaders: { "x-ms-client-request-id": "js-req-42" } } });
  assert.equal(x.got.headers.get("x-ms-client-request-id"), "js-req-42");
  const ct = x.got.headers.get("content-type") || "";
  assert.ok(ct.split(";").map((s) => s.trim()).includes("application/json"), `content-type ${ct}`);
  assert.match(x.got.headers.get("etag") || "", /^W\/"datetime'.+'"$/);
  const body = JSON.parse(x.got.body);
  assert.equal(body["odata.etag"], created.etag);

  // Merge and replace are 204 with a new ETag; delete is 204.
  x = capture();
  const merged = await c.updateEntity({ partitionKey: "p", rowKey: "r", w: 2 }, "Merge", x.options);
  assert.equal(x.got.status, 204);
  assert.equal(x.got.headers.get("etag"), merged.etag);
  assert.notEqual(merged.etag, created.etag);
  x = capture();
  await c.deleteEntity("p", "r", x.options);
  assert.equal(x.got.status, 204);

  // An error carries Azure's JSON body.
  x = capture();
  await h.expectRestError(c.getEntity("p", "r", x.options), 404, "ResourceNotFound");
  const err = JSON.parse(x.got.body);
  assert.equal(err["odata.error"].code, "ResourceNotFound");
  assert.equal(err["odata.error"].message.lang, "en-US");
  assert.equal(typeof err["odata.error"].message.value, "string");
});

h.scenario("protocol: merge sent as POST with X-HTTP-Method: MERGE", async (t) => {
  const c = await h.freshTable(t, "jscosmos");
  await c.createEntity({ partitionKey: "p", rowKey: "r", a: 1 });
  // For endpoints it takes for Cosmos DB (any http://localhost/... not
  // under /devstoreaccount1) the SDK rewrites PATCH this way; the same
  // rewrite is applied here to a normal client.
  const rewrite = {
    name: "patchAsMerge",
    sendRequest(request, next) {
      if (request.method === "PATCH") {
        request.method = "POST";
        request.headers.set("X-HTTP-Method", "MERGE");
      }
      return next(request);
    },
  };
  const merging = new TableClient(h.endpoint, c.tableName, h.credential, {
    allowInsecureConnection: true,
    retryOptions: { maxRetries: 0 },
    additionalPolicies: [{ policy: rewrite, position: "perCall" }],
  });
  await merging.updateEntity({ partitionKey: "p", rowKey: "r", b: 2 }, "Merge");
  await merging.upsertEntity({ partitionKey: "p", rowKey: "new", b: 3 }, "Merge");
  const e = await c.getEntity("p", "r");
  assert.deepEqual([e.a, e.b], [1, 2]);
  assert.equal((await c.getEntity("p", "new")).b, 3);
});
