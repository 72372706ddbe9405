// InferenceModel.spec: what to serve, how to split it across pods, how to route to it.
import { z } from "zod";
import { SERVED_MODEL_NAME_MAX_LENGTH, SERVED_MODEL_NAME_PATTERN } from "../kernel/served-model-name.ts";
import { resourceRequirementsSchema, secretKeySelectorSchema } from "./common-types.ts";
import { doc, immutable } from "./schema-kit.ts";

export const ARCHITECTURES = ["auto", "llama", "mistral", "qwen2", "mixtral"] as const;
export const DTYPES = ["auto", "float32", "float16", "bfloat16"] as const;
export const QUANTIZATIONS = ["none", "int8", "int4"] as const;
export const SERVING_MODES = ["colocated", "disaggregated"] as const;
export const ROUTING_STRATEGIES = [
  "consistent-hash",
  "least-load",
  "least-latency",
  "round-robin",
  "random",
  "power-of-two",
] as const;
export const KV_FAILURE_POLICIES = ["recompute", "fail"] as const;

export const SPECULATIVE_METHODS = ["ngram", "draft_model"] as const;

const speculative = doc(
  z
    .object({
      method: doc(
        z.enum(SPECULATIVE_METHODS),
        "ngram: prompt lookup (propose the tokens that followed the last n-gram's earlier occurrence); draft_model: a smaller checkpoint with the same tokenizer proposes.",
      ),
      draftModelPath: doc(
        z.string().min(1).max(1024).optional(),
        "The draft checkpoint's folder (draft_model only): absolute inside the worker, or relative to the volume when pvc is set.",
      ),
      numSpeculativeTokens: doc(
        z.int().min(1).max(16),
        "Tokens proposed per step and verified in one target step.",
      ),
      promptLookupMax: doc(
        z.int().min(1).optional(),
        "Longest n-gram matched (ngram only; default: promptLookupMin, else 5).",
      ),
      promptLookupMin: doc(
        z.int().min(1).optional(),
        "Shortest n-gram matched (ngram only; default: promptLookupMax, else 5).",
      ),
      disableByBatchSize: doc(
        z.int().min(1).optional(),
        "Turn proposals off while more requests than this run on a worker (large batches, where verifying costs more than it saves); unset: never off.",
      ),
    })
    .optional(),
  "Speculative decoding (tessera serve --speculative-config, vLLM's): output distribution unchanged, fewer target steps per token. Requests opt out with disable_speculation. A change replaces the pods one replica at a time.",
  {
    rules: [
      {
        rule: "self.method != 'draft_model' || has(self.draftModelPath)",
        message: "draft_model needs draftModelPath",
        fieldPath: ".draftModelPath",
      },
      {
        rule: "self.method != 'ngram' || (!has(self.draftModelPath))",
        message: "draftModelPath applies to draft_model only",
        fieldPath: ".draftModelPath",
      },
      {
        rule: "!has(self.promptLookupMin) || !has(self.promptLookupMax) || self.promptLookupMin <= self.promptLookupMax",
        message: "promptLookupMin must be <= promptLookupMax",
        fieldPath: ".promptLookupMin",
      },
    ],
  },
);

const modelSource = doc(
  z.object({
    path: doc(
      z.string().min(1).max(1024),
      "Folder of the Hugging Face checkpoint (config.json, *.safetensors, tokenizer.json). Absolute inside the worker (baked into the image, or on the dev machine); relative to the volume when pvc is set.",
    ),
    pvc: doc(
      z
        .object({ claimName: doc(z.string().min(1), "PersistentVolumeClaim holding the checkpoint.") })
        .optional(),
      "Mount this claim read-only at /models and read the checkpoint from /models/<path>.",
    ),
    servedName: doc(
      z
        .string()
        .min(1)
        .max(SERVED_MODEL_NAME_MAX_LENGTH)
        .regex(new RegExp(SERVED_MODEL_NAME_PATTERN))
        .optional(),
      "The model id clients send (tessera.v1 GenerateRequest.model, OpenAI `model`), which the workers serve (tessera serve --served-model-name) and the router lists at /v1/models; defaults to metadata.name, never the checkpoint folder's name. Letters, digits and . _ : / -, starting with a letter or digit. A change replaces the pods one replica at a time and rolls the router; clients must then send the new name.",
    ),
    architecture: doc(
      z.enum(ARCHITECTURES).default("auto"),
      "Architecture override; auto detects it from config.json.",
    ),
    dtype: doc(z.enum(DTYPES).default("auto"), "Weight dtype to run in; auto keeps the checkpoint's."),
    quantization: doc(
      z.enum(QUANTIZATIONS).default("none"),
      "Weight-only quantization at load (tessera serve --quantization): int8 or int4 keep the projection matrices as block-wise codes (blocks of 128 input features, one scale each), about 26% or 13% of their float32 size (a float32 scale per block included), at some cost in quality (bench/RESULTS.md, quality); none keeps the weights as dtype says. A change replaces the pods one replica at a time.",
    ),
    speculative: speculative,
    numLayers: doc(
      z.int().min(1).max(1024).optional(),
      "Decoder layers of the checkpoint; needed to split it into pipeline stages (parallelism.pipeline > 1).",
    ),
  }),
  "Where the weights come from and how to read them.",
  {
    rules: [
      {
        rule: "has(self.pvc) || self.path.startsWith('/')",
        message: "path must be absolute unless pvc is set",
        fieldPath: ".path",
      },
      {
        rule: "!has(self.pvc) || !self.path.startsWith('/')",
        message: "path must be relative to the volume when pvc is set",
        fieldPath: ".path",
      },
    ],
  },
);

const parallelism = doc(
  z
    .object({
      tensor: doc(
        z.int().min(1).max(64).default(1),
        "Tensor-parallel ranks per pipeline stage (one pod each); a power of two.",
        {
          rules: [
            { rule: "[1, 2, 4, 8, 16, 32, 64].exists(n, n == self)", message: "must be a power of two" },
          ],
        },
      ),
      pipeline: doc(
        z.int().min(1).max(64).default(1),
        "Pipeline stages per replica (one pod per rank each).",
      ),
    })
    .prefault({}),
  "How one replica is split: pipeline stages x tensor ranks pods.",
);

const serving = doc(
  z
    .object({
      mode: doc(
        z.enum(SERVING_MODES).default("colocated"),
        "colocated: every replica prefills and decodes. disaggregated: prefill replicas write KV blocks to the KV store, decode replicas read them. Immutable.",
        { rules: [immutable("serving.mode")] },
      ),
      prefillReplicas: doc(
        z.int().min(0).max(1000).default(1),
        "Prefill replicas in disaggregated mode (spec.replicas counts decode replicas); ignored when colocated.",
      ),
    })
    .prefault({}),
  "Whether prefill and decode run in the same pods.",
);

const poolName = z
  .string()
  .regex(/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/)
  .max(253);

const pools = doc(
  z
    .object({
      default: doc(poolName.default("default"), "WorkerPool for every role without its own."),
      prefill: doc(poolName.optional(), "WorkerPool of prefill pods (disaggregated mode)."),
      decode: doc(poolName.optional(), "WorkerPool of decode pods (disaggregated mode)."),
    })
    .prefault({}),
  "The WorkerPool (class of capacity) each role's pods run in.",
);

const engine = doc(
  z
    .object({
      blockSize: doc(z.int().min(1).max(256).default(16), "Tokens per KV block."),
      kvCacheBlocks: doc(
        z.int().min(0).default(0),
        "KV blocks per worker; 0 sizes the pool from memory (the engine's default).",
      ),
      maxNumBatchedTokens: doc(
        z.int().min(1).max(1_048_576).default(256),
        "Tokens computed per engine step over all requests (long prompts prefill in chunks of it).",
      ),
      maxNumSeqs: doc(z.int().min(1).max(4096).default(64), "Requests running at once per worker."),
      enablePrefixCaching: doc(z.boolean().default(true), "Reuse KV blocks of shared prompt prefixes."),
    })
    .prefault({}),
  "Engine settings of every worker; a change replaces the pods one replica at a time.",
);

const weights = doc(
  z
    .object({
      prefix: doc(
        z.number().min(0).max(100).default(1),
        "Weight of the prefix-affinity (consistent hash) score.",
      ),
      load: doc(z.number().min(0).max(100).default(0), "Weight of the load score (queue and KV use)."),
      latency: doc(z.number().min(0).max(100).default(0), "Weight of the time-to-first-token score."),
    })
    .prefault({}),
  "Scorer weights of the consistent-hash strategy.",
);

const routing = doc(
  z
    .object({
      strategy: doc(
        z.enum(ROUTING_STRATEGIES).default("consistent-hash"),
        "How the router picks a replica: consistent-hash (prefix affinity with bounded loads, plus weighted scores), least-load, least-latency, round-robin, random or power-of-two.",
      ),
      weights,
      epsilon: doc(
        z.number().gt(0).max(10).default(0.25),
        "Bounded-load slack of consistent hashing: a replica takes at most (1 + epsilon) x the mean load.",
      ),
      prefixBlocks: doc(
        z.int().min(1).max(1024).default(8),
        "Leading KV blocks of a prompt that form its routing key.",
      ),
      sessionHeader: doc(
        z
          .string()
          .regex(/^[a-z0-9-]+$/)
          .max(64)
          .default("x-session-id"),
        "Request header whose value pins a session to one replica (instead of the prompt prefix).",
      ),
      apiKeysSecret: doc(
        z
          .object({
            name: doc(z.string().min(1), "Name of a Secret in the model's namespace."),
            key: doc(z.string().min(1).default("api-keys.yaml"), "Key within the Secret."),
          })
          .optional(),
        "Secret key holding the router's API keys file (YAML: keys: [{name, key, requestsPerSecond, tokensPerSecond}]): clients must then send Authorization: Bearer KEY, and each key has its own rate limits. A new version of the Secret is taken within seconds of reaching the pod, without a restart. Unset: no authentication.",
      ),
      replicas: doc(
        z.int().min(1).max(16).default(1),
        "Router pods. More than one serve active-active behind the router Service: routing is deterministic (consistent hashing on the prompt's blocks or the session key), so every router pod picks the same replica for a request at equal load, with no state shared between them.",
      ),
    })
    .prefault({}),
  "How the router spreads requests over the replicas.",
);

const kvTransfer = doc(
  z
    .object({
      redis: doc(
        z
          .object({
            address: doc(
              z.string().regex(/^[^\s:]+:[0-9]{1,5}$/),
              "host:port of the Redis server that holds KV blocks.",
            ),
            passwordSecret: doc(secretKeySelectorSchema.optional(), "Secret key holding the Redis password."),
            db: doc(z.int().min(0).max(15).default(0), "Redis database number."),
          })
          .optional(),
        "Redis as the KV transfer store.",
      ),
      ttlSeconds: doc(z.int().min(1).max(86_400).default(600), "How long KV blocks stay in the store."),
      timeoutMs: doc(
        z.int().min(1).max(60_000).default(2_000),
        "Deadline of one store operation (tessera serve --kv-timeout-ms): a store that does not answer within it costs a request this long once, then counts as down (requests run on one worker) until it answers again.",
      ),
      failurePolicy: doc(
        z.enum(KV_FAILURE_POLICIES).default("recompute"),
        "When a block cannot be read (miss, timeout, checksum, store down): recompute it locally, or fail the request.",
      ),
    })
    .prefault({}),
  "Where prefill workers put KV blocks for decode workers. Keys are prefixed with tessera:kv:<namespace>:<name>: and deleted with the model.",
);

const tls = doc(
  z
    .object({
      secretName: doc(
        z.string().min(1).optional(),
        "A kubernetes.io/tls Secret in the model's namespace with tls.crt, tls.key and ca.crt (as cert-manager writes it), mounted into worker and router pods: workers serve mutual TLS, the router and a replica's shards present its certificate and verify their peers' against its ca.crt. A renewed Secret is taken without a restart.",
      ),
      serverName: doc(
        z.string().min(1).optional(),
        "The name the workers' certificates carry (a DNS SAN), checked instead of the pod IP dialled; e.g. <name>-workers.<namespace>.svc. Unset: the certificates must name the pod IPs.",
      ),
      frontDoor: doc(
        z
          .object({
            secretName: doc(
              z.string().min(1),
              "A kubernetes.io/tls Secret for the router's gRPC and HTTPS front door.",
            ),
            clientAuth: doc(
              z.boolean().default(false),
              "Clients must present a certificate that the Secret's ca.crt verifies (mutual TLS).",
            ),
          })
          .optional(),
        "TLS at the router's front door. Unset: plaintext.",
      ),
    })
    .optional(),
  "TLS between the model's components (secretName) and at its router's front door (frontDoor). Unset: plaintext. A pod serving TLS is probed by TCP on its gRPC port (the kubelet's gRPC probe speaks no TLS).",
  {
    rules: [
      {
        rule: "!has(self.serverName) || has(self.secretName)",
        message: "serverName needs secretName",
        fieldPath: ".serverName",
      },
    ],
  },
);

export const inferenceModelSpecSchema = doc(
  z.object({
    model: modelSource,
    parallelism,
    replicas: doc(
      z.int().min(0).max(1000).default(1),
      "Replicas serving the model (decode replicas in disaggregated mode). Each has pipeline x tensor pods.",
    ),
    serving,
    pools,
    engine,
    routing,
    kvTransfer,
    tls,
    resources: doc(
      resourceRequirementsSchema.prefault({}),
      "Resources per shard (pod), merged over the WorkerPool's (these win per resource).",
    ),
  }),
  "The desired state of the model.",
  {
    rules: [
      {
        rule: "self.serving.mode != 'disaggregated' || has(self.kvTransfer.redis)",
        message: "disaggregated serving needs a KV transfer store: set kvTransfer.redis",
        fieldPath: ".kvTransfer.redis",
        reason: "FieldValueRequired",
      },
      {
        rule: "self.parallelism.pipeline == 1 || (has(self.model.numLayers) && self.parallelism.pipeline <= self.model.numLayers)",
        message: "must not exceed model.numLayers (set model.numLayers to split the model into stages)",
        fieldPath: ".parallelism.pipeline",
      },
      {
        rule: "self.serving.mode == 'disaggregated' || (!has(self.pools.prefill) && !has(self.pools.decode))",
        message: "per-role pools need serving.mode disaggregated",
        fieldPath: ".pools",
      },
    ],
  },
);

export type InferenceModelSpec = z.infer<typeof inferenceModelSpecSchema>;
export type InferenceModelSpecInput = z.input<typeof inferenceModelSpecSchema>;
export type ServingMode = (typeof SERVING_MODES)[number];
