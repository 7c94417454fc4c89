#!/usr/bin/env node
'use strict';
// `npx tablestore ...`: the platform package's binary with these arguments.
const { spawnSync } = require('node:child_process');
const { binaryPath } = require('../index.js');

const r = spawnSync(binaryPath(), process.argv.slice(2), { stdio: 'inherit' });
if (r.error) {
  console.error(r.error.message);
  process.exit(1);
}
process.exit(r.status === null ? 1 : r.status);
