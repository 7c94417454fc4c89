'use strict';
// Jest's globalSetup: one tablestore for the run. Test files reach it with
// connectTablestore() (TABLESTORE_URL, TABLESTORE_CONTROL_URL,
// TABLESTORE_CONNECTION_STRING and TABLESTORE_COSMOS are set for the
// workers). TABLESTORE_SEED names a seed directory; TABLESTORE_COSMOS=true
// serves Cosmos DB for Table (serve --cosmos).
//
//   // jest.config.js
//   module.exports = {
//     globalSetup: '@tablestore/testkit/jest-global-setup',
//     globalTeardown: '@tablestore/testkit/jest-global-teardown',
//   };
//
// withOptions(options) is a global setup giving startTablestore options
// over the environment's, for a setup file of your own:
//
//   // tablestore-setup.js, named by globalSetup
//   module.exports = require('@tablestore/testkit/jest-global-setup').withOptions({ cosmos: true });
const { startTablestore, globalSetupOptions } = require('./index.js');

function withOptions(options) {
  return async function tablestoreGlobalSetup() {
    const ts = await startTablestore(globalSetupOptions(options));
    ts.exportEnv();
    globalThis.__TABLESTORE__ = ts;
  };
}

module.exports = withOptions();
module.exports.withOptions = withOptions;
