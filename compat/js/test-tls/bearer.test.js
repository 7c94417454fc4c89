// The SDK's TokenCredential over https: run.sh starts the https server
// with --bearer-jwks (keys written by tokens.js) and gives the signing
// key in TABLES_TOKEN_KEY. Tokens: a contributor's, a reader's, an
// expired one, one for another audience, one signed by another key.
"use strict";

const assert = require("node:assert/strict");
const crypto = require("node:crypto");
const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");
const { test } = require("node:test");
const { TableClient, TableServiceClient } = require("@azure/data-tables");
const tokens = require("./tokens.js");

const cs = process.env.TABLES_CONNECTION_STRING;
const keyFile = process.env.TABLES_TOKEN_KEY;
const endpoint = /TableEndpoint=([^;]+)/.exec(cs || "")?.[1]?.replace(/\/+$/, "");
const opts = { retryOptions: { maxRetries: 0 } };

function credential(mod = {}, signingKey = keyFile) {
  const now = Math.floor(Date.now() / 1000);
  const claims = {
    iss: tokens.issuer,
    aud: "https://storage.azure.com",
    exp: now + 3600,
    nbf: now - 60,
    oid: "js-app",
    roles: ["Storage Table Data Contributor"],
    ...mod,
  };
  const scopes = [];
  return {
    scopes,
    async getToken(s) {
      scopes.push(...[].concat(s));
      return { token: tokens.sign(claims, signingKey), expiresOnTimestamp: Date.now() + 3600_000 };
    },
  };
}

async function status(promise) {
  try {
    await promise;
    return [200, undefined];
  } catch (err) {
    return [err.statusCode, err.response?.headers.get("x-ms-error-code")];
  }
}

test("bearer: tokens from a TokenCredential, by role, and refused ones", { skip: !keyFile && "TABLES_TOKEN_KEY unset" }, async () => {
  const name = `jsbearer${Date.now() % 1e9}`;
  const contributor = credential();
  const svc = new TableServiceClient(endpoint, contributor, opts);
  await svc.createTable(name);
  assert.ok(contributor.scopes.includes("https://storage.azure.com/.default"), `scopes ${contributor.scopes}`);
  try {
    const client = new TableClient(endpoint, name, contributor, opts);
    await client.createEntity({ partitionKey: "p", rowKey: "1" });

    const reader = new TableClient(endpoint, name, credential({ roles: ["Storage Table Data Reader"] }), opts);
    assert.equal((await reader.getEntity("p", "1")).rowKey, "1");
    assert.deepEqual(await status(reader.createEntity({ partitionKey: "p", rowKey: "2" })), [403, "AuthorizationPermissionMismatch"]);

    const otherKey = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "jwt-")), "other.pem");
    const { privateKey } = crypto.generateKeyPairSync("rsa", { modulusLength: 2048 });
    fs.writeFileSync(otherKey, privateKey.export({ type: "pkcs8", format: "pem" }));
    const now = Math.floor(Date.now() / 1000);
    for (const [what, cred] of [
      ["expired", credential({ exp: now - 3600 })],
      ["wrong audience", credential({ aud: "https://vault.azure.net" })],
      ["wrong signature", credential({}, otherKey)],
    ]) {
      const bad = new TableClient(endpoint, name, cred, opts);
      assert.deepEqual(await status(bad.getEntity("p", "1")), [401, "InvalidAuthenticationInfo"], what);
    }
  } finally {
    await svc.deleteTable(name);
  }
});
