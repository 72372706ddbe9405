// The worker's public entry: what the CLI needs to run a model (`tessera serve`, `tessera generate`).
// Nothing else outside services/worker imports the worker (scripts/import-direction.ts). Every `tessera`
// command loads it to build its options, so it stays light: `tessera serve`'s flag table (a
// services/kernel/flag-table.ts table) now; the engine and the server only when a command runs them.
export { SERVE_FLAGS } from "./server/serve-flags.ts";

/** The engine, for `tessera generate`: a model in this process. */
export async function loadEngine() {
  return (await import("./engine/engine.ts")).Engine;
}

/** `tessera serve`'s config from its flags and environment (serve-flag-config.ts). */
export async function loadServeConfig() {
  return (await import("./server/serve-flag-config.ts")).serveConfigFromFlags;
}

/** The server `tessera serve` runs until SIGTERM. */
export async function loadServe() {
  return (await import("./server/serve.ts")).serve;
}

/** An engine in this process tuned for throughput, with the model's sampling defaults (`tessera batch`). */
export async function loadOfflineEngine() {
  return (await import("./server/offline-engine.ts")).offlineEngine;
}
