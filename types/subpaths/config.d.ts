// 'mxnet-wasm/config': settings read when the package loads (js/config.mjs). Copied to dist/config.d.ts.
export type Tier = 'simd' | 'threads' | 'relaxed-simd' | 'relaxed-simd-threads';
/** Where the tiers' .wasm (and the threaded tiers' worker) files are fetched from: one prefix
 * ending in '/' (the simd tier's files there, the others in '<tier>/' below it) or one per tier. */
export declare function setWasmPaths(paths: string | URL | Partial<Record<Tier, string | URL>>): void;
/** The most the wasm heap may grow to, in bytes (at least 32 MiB; default and at most 4 GiB). */
export declare function setMemoryLimit(bytes: number): void;
/** Loads this tier (what 'mxnet-wasm/<tier>' does); an MXNetError at load if the host cannot run it. */
export declare function requestTier(tier: Tier): void;
