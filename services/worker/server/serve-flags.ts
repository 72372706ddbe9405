// Every setting `tessera serve` takes from its command line or its environment, declared once (a table
// of services/kernel/flag-table.ts): the flag, its help, how it is read, its default, the variable the
// operator sets instead on a worker pod (operator/placement/shard-env.ts) and its field in the serve
// config (serve-config.ts).
// The CLI mounts the flags (services/cli/serve-command.ts); serve-flag-config.ts reads them into a
// ServeConfig. Variables without a flag: TESSERA_KV_PASSWORD (from a Secret), TESSERA_LAYER_START /
// TESSERA_LAYER_END (the stage's layers [start, end), the operator's split) and TESSERA_HOSTS_FILE, which
// only the dev cluster's kubelet sets: its stand-in for cluster DNS, a hosts-style file where peer names
// are looked up before DNS (services/worker/parallel/peer-hosts.ts).
// This module stays light (no zod, no model code): every `tessera` command loads it to build its options.
import {
  type FlagTable,
  type FlagValues,
  integer,
  nonNegativeInteger,
  positiveInteger,
  type Reader,
  trimmed,
} from "../../kernel/flag-table.ts";
import { servedModelNameProblem } from "../../kernel/served-model-name.ts";
import { quantizationBlockSize } from "./serve-quantization-flags.ts";

/** `--layers 0-11`: layers 0 to 11 inclusive, as [0, 12). */
export const layerRange: Reader<{ start: number; end: number }> = (text) => {
  const m = /^\s*(\d+)\s*-\s*(\d+)\s*$/.exec(text);
  const first = Number(m?.[1]);
  const last = Number(m?.[2]);
  if (!m || last < first) return { error: "must be first-last layer numbers, e.g. 0-11" };
  return { value: { start: first, end: last + 1 } };
};

/** `a:50051, b:50051` -> ["a:50051", "b:50051"]. */
export const addressList: Reader<string[]> = (text) => ({
  value: text
    .split(",")
    .map((p) => p.trim())
    .filter((p) => p !== ""),
});

/** `--served-model-name q2`, checked by the rule every served name follows (kernel/served-model-name.ts). */
export const servedModelName: Reader<string> = (text) => {
  const problem = servedModelNameProblem(text);
  return problem === undefined ? { value: text } : { error: problem };
};

const parallel = "parallel replica:";

export const SERVE_FLAGS = {
  model: { flag: "--model <dir>", description: "checkpoint folder", required: true, field: "modelDir" },
  // The operator sets TESSERA_MODEL_NAME on every worker pod: the InferenceModel's spec.model.servedName.
  servedModelName: {
    flag: "--served-model-name <name>",
    description:
      "the model id clients send and ListModels reports (letters, digits, . _ : / -; default: the checkpoint folder's name)",
    read: servedModelName,
    env: "TESSERA_MODEL_NAME",
    field: "servedName",
  },
  // Checked, and resolved to the registry's names, by modelInput (serve-model-flags.ts).
  architecture: {
    flag: "--architecture <name>",
    description:
      "architecture instead of config.json's: llama, mistral, qwen2, mixtral, or a name such as LlamaForCausalLM; auto: config.json's",
    default: "auto",
    env: "TESSERA_ARCHITECTURE",
  },
  dtype: {
    flag: "--dtype <dtype>",
    description:
      "weight dtype to run in: auto (the checkpoint's), float32, float16 or bfloat16; the engine computes in float32 from weights kept 16-bit unless float32 is asked",
    default: "auto",
    env: "TESSERA_DTYPE",
  },
  // Checked, and made the serve config's quantization, by quantizationInput (serve-quantization-flags.ts);
  // the operator sets TESSERA_QUANTIZATION when the InferenceModel's spec.model.quantization is not none.
  quantization: {
    flag: "--quantization <mode>",
    description:
      "weight-only quantization of the projection matrices at load: none, int8 (one scale per output feature by default, run by onnxruntime's integer GEMM) or int4 (block-wise codes, one scale per block, run by MatMulNBits)",
    choices: ["none", "int8", "int4"],
    default: "none",
    env: "TESSERA_QUANTIZATION",
  },
  quantizationBlockSize: {
    flag: "--quantization-block-size <n|channel>",
    description:
      "input features per quantization block, a power of two of at least 16, or channel: one scale per output feature, run by onnxruntime's integer GEMM (int8 only; int8's default; int4's is 128)",
    read: quantizationBlockSize,
    env: "TESSERA_QUANTIZATION_BLOCK_SIZE",
  },
  quantizationScheme: {
    flag: "--quantization-scheme <scheme>",
    description:
      "symmetric (default: codes centred on zero) or asymmetric (a zero point per block or channel too, for skewed ones)",
    choices: ["symmetric", "asymmetric"],
    env: "TESSERA_QUANTIZATION_SCHEME",
  },
  // Parsed by parseSpeculativeConfig (speculative/speculative-config.ts) in serveConfigFromFlags; the
  // operator sets TESSERA_SPECULATIVE_CONFIG from the InferenceModel's spec.model.speculative.
  speculativeConfig: {
    flag: "--speculative-config <json>",
    description:
      'speculative decoding, as vLLM\'s JSON: {"method": "ngram", "num_speculative_tokens": 4, "prompt_lookup_max": 4} (prompt lookup) or {"model": PATH, "num_speculative_tokens": 4} (a draft model with the same tokenizer); "disable_by_batch_size": N turns it off while more than N requests run',
    env: "TESSERA_SPECULATIVE_CONFIG",
  },
  generationConfig: {
    flag: "--generation-config <mode>",
    description:
      "auto (default): a request's unset temperature, top_p, top_k, min_p and repetition_penalty take the checkpoint's generation_config.json values (logged at start-up, listed by ListModels and /v1/models); none: they keep the neutral defaults",
    choices: ["auto", "none"],
    env: "TESSERA_GENERATION_CONFIG",
    field: "generationConfig",
  },
  port: {
    flag: "--port <port>",
    description: "gRPC port; 0 picks a free one (logged in the 'serving' line)",
    read: integer,
    default: 50051,
    field: "port",
  },
  host: { flag: "--host <host>", description: "interface to listen on", default: "127.0.0.1", field: "host" },
  metricsPort: {
    flag: "--metrics-port <port>",
    description: "serve Prometheus metrics on this port at /metrics (0 = a free one)",
    read: integer,
    field: "metricsPort",
  },
  drainTimeoutMs: {
    flag: "--drain-timeout-ms <ms>",
    description: "how long calls in flight may run after SIGTERM",
    read: nonNegativeInteger,
    default: 30_000,
    field: "drainTimeoutMs",
  },
  threads: {
    flag: "--threads <n>",
    description: "engine threads (default: one per core)",
    read: positiveInteger,
    field: "threads",
  },
  blockSize: {
    flag: "--block-size <tokens>",
    description: "tokens per KV-cache block (default 16)",
    read: positiveInteger,
    field: "engine.blockSize",
  },
  kvCacheBlocks: {
    flag: "--kv-cache-blocks <n>",
    description: "KV-cache size in blocks (default: from --kv-cache-bytes)",
    read: positiveInteger,
    field: "engine.kvCacheBlocks",
  },
  kvCacheBytes: {
    flag: "--kv-cache-bytes <n>",
    description: "KV-cache size in bytes (default 512 MiB)",
    read: positiveInteger,
    field: "engine.kvCacheBytes",
  },
  maxBatchedTokens: {
    flag: "--max-batched-tokens <n>",
    description: "tokens computed per step; longer prompts prefill in chunks (default 256)",
    read: positiveInteger,
    field: "engine.maxNumBatchedTokens",
  },
  maxRunningRequests: {
    flag: "--max-running-requests <n>",
    description: "requests batched at once; more wait (default 64)",
    read: positiveInteger,
    field: "engine.maxNumSeqs",
  },
  virtualEngines: {
    flag: "--virtual-engines <n>",
    description:
      "scheduling loops, each with its own requests and share of the KV pool, so a parallel replica has n batches in flight (default: 1; on a parallel replica's rank 0, one per pipeline stage)",
    read: positiveInteger,
    field: "engine.virtualEngines",
  },
  prefixCaching: {
    flag: "--no-prefix-caching",
    description: "do not reuse KV blocks of shared prompt prefixes",
    field: "engine.enablePrefixCaching",
  },
  attention: {
    flag: "--attention <backend>",
    description: "attention implementation: auto (time them at load), onnx-ops, ms-gqa or shared-prefix",
    field: "engine.attention",
  },
  // The remote KV tier: present only with an address (serve-flag-config.ts).
  kvRedis: {
    flag: "--kv-redis <url>",
    description:
      "remote KV tier, redis:// or rediss:// (disaggregated prefill/decode, shared prefix tier, migration); " +
      "the password comes from $TESSERA_KV_PASSWORD. A worker's role (prefill, decode or both) is not a flag: " +
      "the router's endpoints file gives it (`role: prefill`), or the InferenceModel's serving.mode: disaggregated",
    env: "TESSERA_KV_URL",
    field: "kv.redis.url",
  },
  kvPassword: {
    description: "password of the remote KV tier (from a Secret)",
    env: "TESSERA_KV_PASSWORD",
    field: "kv.redis.password",
  },
  kvKeyPrefix: {
    flag: "--kv-key-prefix <prefix>",
    description: "prefix of this model's keys in Redis",
    env: "TESSERA_KV_KEY_PREFIX",
    field: "kv.redis.keyPrefix",
  },
  kvTtlMs: {
    flag: "--kv-ttl-ms <ms>",
    description: "lifetime of stored KV blocks (default 10 min)",
    read: positiveInteger,
    env: "TESSERA_KV_TTL_MS",
    field: "kv.redis.ttlMs",
  },
  kvTimeoutMs: {
    flag: "--kv-timeout-ms <ms>",
    description:
      "deadline of one KV store operation: a Redis that does not answer within it costs a request this " +
      "long once, then counts as down (requests recompute at once) until it answers again (default 2000)",
    read: positiveInteger,
    env: "TESSERA_KV_TIMEOUT_MS",
    field: "kv.redis.opTimeoutMs",
  },
  kvConnectTimeoutMs: {
    flag: "--kv-connect-timeout-ms <ms>",
    description: "deadline of one connection attempt to the KV store (default 5000)",
    read: positiveInteger,
    env: "TESSERA_KV_CONNECT_TIMEOUT_MS",
    field: "kv.redis.connectTimeoutMs",
  },
  kvPolicy: {
    flag: "--kv-policy <policy>",
    description: "a block that cannot be fetched: recompute it (default) or fail the request",
    choices: ["recompute", "fail"],
    env: "TESSERA_KV_FAILURE_POLICY",
    field: "kv.policy",
  },
  kvReadThrough: {
    flag: "--no-kv-read-through",
    description: "do not look prefix blocks up in Redis before computing them",
    field: "kv.readThrough",
  },
  kvWriteThrough: {
    flag: "--no-kv-write-through",
    description: "do not store the blocks this worker fills",
    field: "kv.writeThrough",
  },
  // This worker's shard of a parallel replica: present only for a group of more than one worker.
  pipelineStage: {
    flag: "--pipeline-stage <n>",
    description: `${parallel} this worker's pipeline stage`,
    read: nonNegativeInteger,
    default: 0,
    env: "TESSERA_STAGE",
    field: "shard.stage",
  },
  pipelineStages: {
    flag: "--pipeline-stages <n>",
    description: `${parallel} pipeline stages`,
    read: positiveInteger,
    default: 1,
    env: "TESSERA_NUM_STAGES",
    field: "shard.stages",
  },
  layers: {
    flag: "--layers <first-last>",
    description: `${parallel} decoder layers of this stage, inclusive, e.g. 0-11 (default $TESSERA_LAYER_START..$TESSERA_LAYER_END, else an even split)`,
    read: layerRange,
    field: "shard.layers",
  },
  layerStart: {
    description: "the stage's first decoder layer",
    read: nonNegativeInteger,
    env: "TESSERA_LAYER_START",
  },
  layerEnd: {
    description: "the layer after the stage's last",
    read: positiveInteger,
    env: "TESSERA_LAYER_END",
  },
  tensorRank: {
    flag: "--tensor-rank <n>",
    description: `${parallel} this worker's tensor rank in its stage`,
    read: nonNegativeInteger,
    default: 0,
    env: "TESSERA_TENSOR_RANK",
    field: "shard.tensorRank",
  },
  tensorSize: {
    flag: "--tensor-size <n>",
    description: `${parallel} tensor ranks per stage`,
    read: positiveInteger,
    default: 1,
    env: "TESSERA_TENSOR_SIZE",
    field: "shard.tensorSize",
  },
  peers: {
    flag: "--peers <host:port,...>",
    description: `${parallel} every worker's gRPC address by global rank, stage * tensor-size + rank`,
    read: addressList,
    env: "TESSERA_PEERS",
    field: "shard.peers",
  },
  hostsFile: {
    description: "dev cluster only: a hosts-style file where peer names are looked up before DNS",
    read: trimmed,
    env: "TESSERA_HOSTS_FILE",
    field: "shard.hostsFile",
  },
  // Mutual TLS (services/rpc/tls-folder.ts): present only with a folder (serve-flag-config.ts).
  tlsDir: {
    flag: "--tls-dir <dir>",
    description:
      "mutual TLS for the gRPC server and the parallel group's links: a mounted TLS Secret folder " +
      "(tls.crt, tls.key, ca.crt), reloaded when it changes (default plaintext)",
    read: trimmed,
    env: "TESSERA_TLS_DIR",
    field: "tls.dir",
  },
  tlsServerName: {
    flag: "--tls-server-name <name>",
    description: "the name peers' certificates must carry, where it is not the host dialled",
    read: trimmed,
    env: "TESSERA_TLS_SERVER_NAME",
    field: "tls.serverName",
  },
  microBatches: {
    flag: "--micro-batches <n>",
    description: `${parallel} micro-batches per step so stages overlap (default 1)`,
    read: positiveInteger,
    field: "shard.microBatches",
  },
  groupTimeoutMs: {
    flag: "--group-timeout-ms <ms>",
    description: `${parallel} how long the group may take to come up (default 600000)`,
    read: positiveInteger,
    field: "shard.formationTimeoutMs",
  },
  stepTimeoutMs: {
    flag: "--step-timeout-ms <ms>",
    description: `${parallel} a step that takes longer fails the group (default 30000)`,
    read: positiveInteger,
    field: "shard.stepTimeoutMs",
  },
} as const satisfies FlagTable;

export type ServeFlags = FlagValues<typeof SERVE_FLAGS>;
