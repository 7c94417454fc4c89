'use strict';
// Jest's globalSetup: one tablestore for the run. Test files reach it with
// connectTablestore() (TABLESTORE_URL, TABLESTORE_CONTROL_URL and
// TABLESTORE_CONNECTION_STRING are set for the workers). TABLESTORE_SEED
// names a seed directory.
//
//   // jest.config.js
//   module.exports = {
//     globalSetup: '@tablestore/testkit/jest-global-setup',
//     globalTeardown: '@tablestore/testkit/jest-global-teardown',
//   };
const { startTablestore } = require('./index.js');

module.exports = async function tablestoreGlobalSetup() {
  const ts = await startTablestore({ seed: process.env.TABLESTORE_SEED || undefined });
  ts.exportEnv();
  globalThis.__TABLESTORE__ = ts;
};
