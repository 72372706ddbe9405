// `tessera serve`: serves one checkpoint over gRPC until SIGTERM or SIGINT, then drains and exits 0.
import { Command } from "commander";
import { createLogger } from "../common/log.ts";
import { asFlagError, integerFlag, nonNegativeIntegerFlag, positiveIntegerFlag } from "./flags.ts";

interface ServeFlags {
  model: string;
  host: string;
  port: number;
  metricsPort?: number;
  drainTimeoutMs: number;
  threads?: number;
  blockSize?: number;
  kvCacheBlocks?: number;
  kvCacheBytes?: number;
  maxBatchedTokens?: number;
  maxRunningRequests?: number;
  prefixCaching: boolean;
  attention?: string;
}

const FLAG_OF_FIELD: Record<string, string> = {
  modelDir: "--model",
  host: "--host",
  port: "--port",
  metricsPort: "--metrics-port",
  drainTimeoutMs: "--drain-timeout-ms",
  threads: "--threads",
  "engine.blockSize": "--block-size",
  "engine.kvCacheBlocks": "--kv-cache-blocks",
  "engine.kvCacheBytes": "--kv-cache-bytes",
  "engine.maxNumBatchedTokens": "--max-batched-tokens",
  "engine.maxNumSeqs": "--max-running-requests",
  "engine.attention": "--attention",
};

export function serveCommand(): Command {
  return new Command("serve")
    .summary("Serve a checkpoint over gRPC")
    .description(
      "Serve a checkpoint over gRPC (tessera.v1.Inference, grpc.health.v1, reflection). " +
        "SIGTERM drains: health turns NOT_SERVING, new calls get UNAVAILABLE, calls in flight finish " +
        "(cancelled after --drain-timeout-ms), then the process exits 0.",
    )
    .requiredOption("--model <dir>", "checkpoint folder")
    .option(
      "--port <port>",
      "gRPC port; 0 picks a free one (logged in the 'serving' line)",
      integerFlag,
      50051,
    )
    .option("--host <host>", "interface to listen on", "127.0.0.1")
    .option(
      "--metrics-port <port>",
      "serve Prometheus metrics on this port at /metrics (0 = a free one)",
      integerFlag,
    )
    .option(
      "--drain-timeout-ms <ms>",
      "how long calls in flight may run after SIGTERM",
      nonNegativeIntegerFlag,
      30_000,
    )
    .option("--threads <n>", "engine threads (default: one per core)", positiveIntegerFlag)
    .option("--block-size <tokens>", "tokens per KV-cache block (default 16)", positiveIntegerFlag)
    .option(
      "--kv-cache-blocks <n>",
      "KV-cache size in blocks (default: from --kv-cache-bytes)",
      positiveIntegerFlag,
    )
    .option("--kv-cache-bytes <n>", "KV-cache size in bytes (default 512 MiB)", positiveIntegerFlag)
    .option(
      "--max-batched-tokens <n>",
      "tokens computed per step; longer prompts prefill in chunks (default 512)",
      positiveIntegerFlag,
    )
    .option(
      "--max-running-requests <n>",
      "requests batched at once; more wait (default 64)",
      positiveIntegerFlag,
    )
    .option("--no-prefix-caching", "do not reuse KV blocks of shared prompt prefixes")
    .option("--attention <backend>", "attention implementation: auto (time them at load), onnx-ops or ms-gqa")
    .action(async (flags: ServeFlags, command: Command) => {
      const { parseServeConfig } = await import("../worker/server/serve-config.ts");
      const {
        model,
        blockSize,
        kvCacheBlocks,
        kvCacheBytes,
        maxBatchedTokens,
        maxRunningRequests,
        prefixCaching,
        attention,
        ...rest
      } = flags;
      const engine = {
        ...(blockSize !== undefined && { blockSize }),
        ...(kvCacheBlocks !== undefined && { kvCacheBlocks }),
        ...(kvCacheBytes !== undefined && { kvCacheBytes }),
        ...(maxBatchedTokens !== undefined && { maxNumBatchedTokens: maxBatchedTokens }),
        ...(maxRunningRequests !== undefined && { maxNumSeqs: maxRunningRequests }),
        ...(attention !== undefined && { attention }),
        enablePrefixCaching: prefixCaching,
      };
      const config = parseServeConfig({ modelDir: model, ...rest, engine });
      if (config.error) command.error(`error: ${asFlagError(config.error, FLAG_OF_FIELD)}`, { exitCode: 2 });
      const { serve } = await import("../worker/server/serve.ts");
      await serve(config.value, createLogger("server"));
    });
}
