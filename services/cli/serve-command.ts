// `tessera serve`: serves one checkpoint over gRPC until SIGTERM or SIGINT, then drains and exits 0.
import { Command, InvalidArgumentError, Option } from "commander";
import { createLogger } from "../kernel/log.ts";
import type { ModelFlags } from "../worker/server/serve-model-flags.ts";
import { parseLayerRange, type ShardFlags } from "../worker/server/serve-shard-flags.ts";
import { asFlagError, integerFlag, nonNegativeIntegerFlag, positiveIntegerFlag } from "./flags.ts";

interface ServeFlags extends ShardFlags, ModelFlags {
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
  virtualEngines?: number;
  prefixCaching: boolean;
  attention?: string;
  kvRedis?: string;
  kvKeyPrefix?: string;
  kvTtlMs?: number;
  kvPolicy?: string;
  kvReadThrough: boolean;
  kvWriteThrough: boolean;
}

const FLAG_OF_FIELD: Record<string, string> = {
  modelDir: "--model",
  architecture: "--architecture",
  dtype: "--dtype",
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
  "engine.virtualEngines": "--virtual-engines",
  "engine.attention": "--attention",
  "shard.stage": "--pipeline-stage",
  "shard.stages": "--pipeline-stages",
  "shard.layers": "--layers",
  "shard.tensorRank": "--tensor-rank",
  "shard.tensorSize": "--tensor-size",
  "shard.peers": "--peers",
  "shard.microBatches": "--micro-batches",
  "shard.formationTimeoutMs": "--group-timeout-ms",
  "shard.stepTimeoutMs": "--step-timeout-ms",
  "kv.redis.url": "--kv-redis",
  "kv.redis.keyPrefix": "--kv-key-prefix",
  "kv.redis.ttlMs": "--kv-ttl-ms",
  "kv.policy": "--kv-policy",
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
      "--architecture <name>",
      "architecture instead of config.json's: llama, mistral, qwen2, mixtral, or a name such as LlamaForCausalLM (default $TESSERA_ARCHITECTURE, else auto)",
    )
    .option(
      "--dtype <dtype>",
      "weight dtype to run in: auto (the checkpoint's), float32, float16 or bfloat16; the engine computes in float32 (default $TESSERA_DTYPE, else auto)",
    )
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
    .option(
      "--virtual-engines <n>",
      "scheduling loops, each with its own requests and share of the KV pool, so a parallel replica has n batches in flight (default: 1; on a parallel replica's rank 0, one per pipeline stage)",
      positiveIntegerFlag,
    )
    .option("--no-prefix-caching", "do not reuse KV blocks of shared prompt prefixes")
    .option("--attention <backend>", "attention implementation: auto (time them at load), onnx-ops or ms-gqa")
    .addOption(
      new Option(
        "--kv-redis <url>",
        "remote KV tier, redis:// or rediss:// (disaggregated prefill/decode, shared prefix tier, migration); " +
          "the password comes from $TESSERA_KV_PASSWORD",
      ).env("TESSERA_KV_URL"),
    )
    .addOption(
      new Option("--kv-key-prefix <prefix>", "prefix of this model's keys in Redis").env(
        "TESSERA_KV_KEY_PREFIX",
      ),
    )
    .addOption(
      new Option("--kv-ttl-ms <ms>", "lifetime of stored KV blocks (default 10 min)")
        .env("TESSERA_KV_TTL_MS")
        .argParser(positiveIntegerFlag),
    )
    .addOption(
      new Option(
        "--kv-policy <policy>",
        "a block that cannot be fetched: recompute it (default) or fail the request",
      )
        .choices(["recompute", "fail"])
        .env("TESSERA_KV_FAILURE_POLICY"),
    )
    .option("--no-kv-read-through", "do not look prefix blocks up in Redis before computing them")
    .option("--no-kv-write-through", "do not store the blocks this worker fills")
    .option(
      "--pipeline-stage <n>",
      "parallel replica: this worker's pipeline stage (default $TESSERA_STAGE, else 0)",
      nonNegativeIntegerFlag,
    )
    .option(
      "--pipeline-stages <n>",
      "parallel replica: pipeline stages (default $TESSERA_NUM_STAGES, else 1)",
      positiveIntegerFlag,
    )
    .option(
      "--layers <first-last>",
      "parallel replica: decoder layers of this stage, inclusive, e.g. 0-11 (default $TESSERA_LAYER_START..$TESSERA_LAYER_END, else an even split)",
      layerRangeFlag,
    )
    .option(
      "--tensor-rank <n>",
      "parallel replica: this worker's tensor rank in its stage (default $TESSERA_TENSOR_RANK, else 0)",
      nonNegativeIntegerFlag,
    )
    .option(
      "--tensor-size <n>",
      "parallel replica: tensor ranks per stage (default $TESSERA_TENSOR_SIZE, else 1)",
      positiveIntegerFlag,
    )
    .option(
      "--peers <host:port,...>",
      "parallel replica: every worker's gRPC address by global rank, stage * tensor-size + rank (default $TESSERA_PEERS)",
    )
    .option(
      "--micro-batches <n>",
      "parallel replica: micro-batches per step so stages overlap (default 1)",
      positiveIntegerFlag,
    )
    .option(
      "--group-timeout-ms <ms>",
      "parallel replica: how long the group may take to come up (default 600000)",
      positiveIntegerFlag,
    )
    .option(
      "--step-timeout-ms <ms>",
      "parallel replica: a step that takes longer fails the group (default 30000)",
      positiveIntegerFlag,
    )
    .action(async (flags: ServeFlags, command: Command) => {
      const { parseServeConfig } = await import("../worker/server/serve-config.ts");
      const { shardInput } = await import("../worker/server/serve-shard-flags.ts");
      const { modelInput } = await import("../worker/server/serve-model-flags.ts");
      const {
        model,
        architecture,
        dtype,
        blockSize,
        kvCacheBlocks,
        kvCacheBytes,
        maxBatchedTokens,
        maxRunningRequests,
        virtualEngines,
        prefixCaching,
        attention,
        kvRedis,
        kvKeyPrefix,
        kvTtlMs,
        kvPolicy,
        kvReadThrough,
        kvWriteThrough,
        pipelineStage,
        pipelineStages,
        layers,
        tensorRank,
        tensorSize,
        peers,
        microBatches,
        groupTimeoutMs,
        stepTimeoutMs,
        ...rest
      } = flags;
      const shard = shardInput(
        {
          pipelineStage,
          pipelineStages,
          layers,
          tensorRank,
          tensorSize,
          peers,
          microBatches,
          groupTimeoutMs,
          stepTimeoutMs,
        },
        process.env,
      );
      const modelSettings = modelInput({ architecture, dtype }, process.env);
      if (modelSettings.error) command.error(`error: ${modelSettings.error.message}`, { exitCode: 2 });
      const kv = kvRedis && {
        redis: {
          url: kvRedis,
          ...(process.env["TESSERA_KV_PASSWORD"] && { password: process.env["TESSERA_KV_PASSWORD"] }),
          ...(kvKeyPrefix !== undefined && { keyPrefix: kvKeyPrefix }),
          ...(kvTtlMs !== undefined && { ttlMs: kvTtlMs }),
        },
        ...(kvPolicy !== undefined && { policy: kvPolicy }),
        readThrough: kvReadThrough,
        writeThrough: kvWriteThrough,
      };
      const engine = {
        ...(blockSize !== undefined && { blockSize }),
        ...(kvCacheBlocks !== undefined && { kvCacheBlocks }),
        ...(kvCacheBytes !== undefined && { kvCacheBytes }),
        ...(maxBatchedTokens !== undefined && { maxNumBatchedTokens: maxBatchedTokens }),
        ...(maxRunningRequests !== undefined && { maxNumSeqs: maxRunningRequests }),
        ...(virtualEngines !== undefined && { virtualEngines }),
        ...(attention !== undefined && { attention }),
        enablePrefixCaching: prefixCaching,
      };
      const config = parseServeConfig({
        modelDir: model,
        ...modelSettings.value,
        ...rest,
        engine,
        ...(kv && { kv }),
        ...(shard && { shard }),
      });
      if (config.error) command.error(`error: ${asFlagError(config.error, FLAG_OF_FIELD)}`, { exitCode: 2 });
      const { serve } = await import("../worker/server/serve.ts");
      await serve(config.value, createLogger("server"));
    });
}

/** `--layers 0-11`: layers 0 to 11 inclusive, as [0, 12). */
function layerRangeFlag(value: string): { start: number; end: number } {
  const range = parseLayerRange(value);
  if (!range) throw new InvalidArgumentError("must be first-last layer numbers, e.g. 0-11");
  return range;
}
