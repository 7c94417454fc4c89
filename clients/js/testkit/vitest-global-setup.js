'use strict';
// Vitest's globalSetup: one tablestore for the run, stopped by the
// returned teardown. Test files reach it with connectTablestore()
// (TABLESTORE_URL, TABLESTORE_CONTROL_URL, TABLESTORE_CONNECTION_STRING and
// TABLESTORE_COSMOS are set for the workers). TABLESTORE_SEED names a seed
// directory; TABLESTORE_COSMOS=true serves Cosmos DB for Table (serve
// --cosmos).
//
//   // vitest.config.js
//   export default { test: { globalSetup: ['@tablestore/testkit/vitest-global-setup'] } };
//
// withOptions(options) is a global setup giving startTablestore options
// over the environment's, for a setup file of your own:
//
//   // tablestore-setup.js, named by globalSetup
//   module.exports = require('@tablestore/testkit/vitest-global-setup').withOptions({ cosmos: true });
const { startTablestore, globalSetupOptions } = require('./index.js');

function withOptions(options) {
  return async function tablestoreGlobalSetup() {
    const ts = await startTablestore(globalSetupOptions(options));
    ts.exportEnv();
    return () => ts.stop();
  };
}

module.exports = withOptions();
module.exports.withOptions = withOptions;
