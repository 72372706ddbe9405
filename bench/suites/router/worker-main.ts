// A benchmark worker: `tessera serve` with engine settings the CLI has no flags for (a small KV pool
// so prefixes compete for it). Usage: node worker-main.ts '{"modelDir": ..., "engine": {...}}'
import { createLogger } from "../../../services/kernel/log.ts";
import { serve } from "../../../services/worker/server/serve.ts";
import { parseServeConfig } from "../../../services/worker/server/serve-config.ts";

const config = parseServeConfig({ port: 0, drainTimeoutMs: 1_000, ...JSON.parse(process.argv[2] ?? "{}") });
if (config.error) throw config.error;
await serve(config.value, createLogger("bench-worker"));
