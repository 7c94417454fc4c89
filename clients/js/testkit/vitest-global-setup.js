'use strict';
// Vitest's globalSetup: one tablestore for the run, stopped by the
// returned teardown. Test files reach it with connectTablestore()
// (TABLESTORE_URL, TABLESTORE_CONTROL_URL and TABLESTORE_CONNECTION_STRING
// are set for the workers). TABLESTORE_SEED names a seed directory.
//
//   // vitest.config.js
//   export default { test: { globalSetup: ['@tablestore/testkit/vitest-global-setup'] } };
const { startTablestore } = require('./index.js');

module.exports = async function tablestoreGlobalSetup() {
  const ts = await startTablestore({ seed: process.env.TABLESTORE_SEED || undefined });
  ts.exportEnv();
  return () => ts.stop();
};
