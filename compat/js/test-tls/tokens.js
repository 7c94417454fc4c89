// Locally signed Entra ID-style tokens for the bearer scenarios.
//   node test-tls/tokens.js DIR   writes DIR/token-key.pem (RSA, private)
//                                 and DIR/jwks.json (its public half)
// require("./tokens.js").sign(claims, keyFile) returns an RS256 JWT.
"use strict";

const crypto = require("node:crypto");
const fs = require("node:fs");
const path = require("node:path");

const issuer = "https://sts.windows.net/00000000-0000-0000-0000-00000000c0de/";

function b64url(buf) {
  return Buffer.from(buf).toString("base64url");
}

function sign(claims, keyFile, kid = "compat-js") {
  const header = b64url(JSON.stringify({ alg: "RS256", typ: "JWT", kid }));
  const body = b64url(JSON.stringify(claims));
  const sig = crypto.sign("RSA-SHA256", Buffer.from(`${header}.${body}`), fs.readFileSync(keyFile));
  return `${header}.${body}.${b64url(sig)}`;
}

function writeKeys(dir) {
  const { privateKey, publicKey } = crypto.generateKeyPairSync("rsa", { modulusLength: 2048 });
  fs.writeFileSync(path.join(dir, "token-key.pem"), privateKey.export({ type: "pkcs8", format: "pem" }), { mode: 0o600 });
  const jwk = publicKey.export({ format: "jwk" });
  fs.writeFileSync(path.join(dir, "jwks.json"), JSON.stringify({ keys: [{ ...jwk, kid: "compat-js", use: "sig" }] }));
}

if (require.main === module) writeKeys(process.argv[2]);

module.exports = { issuer, sign };
