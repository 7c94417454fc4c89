'use strict';
// Jest's globalTeardown: stops the server jest-global-setup started.
module.exports = async function tablestoreGlobalTeardown() {
  const ts = globalThis.__TABLESTORE__;
  globalThis.__TABLESTORE__ = undefined;
  if (ts) await ts.stop();
};
