import type { StartOptions } from './index';

/** The Jest or Vitest global setup: starts one server for the run with
 * TABLESTORE_SEED and TABLESTORE_COSMOS, and exports its address for the
 * workers (Vitest's resolves to the teardown that stops it). */
declare function tablestoreGlobalSetup(): Promise<void | (() => Promise<void>)>;

declare namespace tablestoreGlobalSetup {
  /** A global setup giving startTablestore options over the
   * environment's, e.g. withOptions({ cosmos: true }). */
  function withOptions(options?: StartOptions): () => Promise<void | (() => Promise<void>)>;
}

export = tablestoreGlobalSetup;
