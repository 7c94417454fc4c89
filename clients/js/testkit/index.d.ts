export interface FaultRule {
  operation?: string;
  table?: string;
  partition?: string;
  status?: number;
  code?: string;
  times?: number;
  every?: number;
  probability?: number;
  seed?: number;
  /** milliseconds, or a string such as "20ms" */
  latency?: number | string;
  /** milliseconds, or a string such as "20ms"; none unless given */
  retryAfter?: number | string;
  drop?: 'before' | 'after';
  page?: 'empty' | 'short' | 'partition';
}

export interface Fault {
  id: number;
  remove(): Promise<void>;
}

export interface RequestRecord {
  operation: string;
  table?: string;
  partition_key?: string;
  row_key?: string;
  method: string;
  status: number;
  code?: string;
  dropped?: boolean;
  duration: number;
  /** a Cosmos server's request units */
  request_charge?: number;
  [field: string]: unknown;
}

export declare class TablestoreError extends Error {
  status: number;
  code: string;
}

export declare class Tablestore {
  readonly url: string;
  readonly controlUrl: string;
  /** Started with cosmos: answers as Cosmos DB for Table. */
  readonly cosmos: boolean;
  readonly connectionString: string;
  readonly log: string[];
  readonly clock: {
    now(): Promise<Date>;
    advance(d: number | string): Promise<Date>;
    set(t: Date | string): Promise<Date>;
  };
  reset(): Promise<void>;
  snapshot(name?: string): Promise<string>;
  restore(name?: string): Promise<void>;
  fault(rule: FaultRule): Promise<Fault>;
  withFault<T>(rule: FaultRule, fn: () => Promise<T>): Promise<T>;
  clearFaults(): Promise<void>;
  requests(): Promise<RequestRecord[]>;
  clearRequests(): Promise<void>;
  exportEnv(env?: Record<string, string | undefined>): void;
  stop(): Promise<void>;
}

export interface StartOptions {
  seed?: string;
  /** serve --cosmos: Cosmos DB for Table, with the emulator's connection string */
  cosmos?: boolean;
  binary?: string;
  args?: string[];
  timeout?: number;
}

export declare function startTablestore(options?: StartOptions): Promise<Tablestore>;

/** What the Jest and Vitest global setups start with: seed from
 * TABLESTORE_SEED, cosmos from TABLESTORE_COSMOS, then options over them. */
export declare function globalSetupOptions(options?: StartOptions): StartOptions;

export declare function connectTablestore(options?: {
  url?: string;
  controlUrl?: string;
  token?: string;
  /** default: TABLESTORE_COSMOS, which the global setups export */
  cosmos?: boolean;
}): Tablestore;

export declare function binaryPath(): string;
export declare const DEV_ACCOUNT: string;
export declare const DEV_KEY: string;
export declare const COSMOS_DEV_ACCOUNT: string;
export declare const COSMOS_DEV_KEY: string;
