// The router's one config object (YAML or JSON file), validated at start-up; errors name the field.
// Relative paths in it (tokenizer folders, the endpoints file, the API keys file) are relative to the
// config file. Every section has defaults; only `models` and `discovery` must be given.
import { readFileSync } from "node:fs";
import path from "node:path";
import { parse as parseYaml } from "yaml";
import { z } from "zod";
import { Code, type Result, TesseraError } from "../../kernel/errors.ts";
import { createLogger } from "../../kernel/log.ts";
import { createPlugins, routingConfigSchema } from "../routing/routing-config.ts";
import { TOOL_CALL_PARSER_NAMES } from "../tools/tool-call-parsers.ts";

const port = z.int().min(0).max(65_535);

const staticDiscovery = z.strictObject({
  type: z.literal("static"),
  /** YAML or JSON file listing the endpoints (see discovery/static-file-discovery.ts). */
  file: z.string().min(1),
  /** How often the file is re-read (0: read once). */
  pollMs: z.int().min(0).default(1_000),
});

const kubernetesDiscovery = z.strictObject({
  type: z.literal("kubernetes"),
  namespace: z.string().min(1).default("default"),
  /** The InferenceModel whose shards (status.shards) are the endpoints. */
  inferenceModel: z.string().min(1),
  /** Default: $KUBECONFIG, else the pod's service account, else ~/.kube/config. */
  kubeconfig: z.string().min(1).optional(),
  /** The kubeconfig context (default: its current context). */
  context: z.string().min(1).optional(),
});

const tlsDir = z.string().min(1);

/**
 * TLS, each part a folder laid out as a mounted Kubernetes TLS Secret (tls.crt, tls.key, ca.crt),
 * reloaded when it changes (services/rpc/tls-folder.ts). Unset parts are plaintext.
 */
const tlsConfig = z.strictObject({
  /** Mutual TLS to the workers: the router presents this certificate and verifies theirs against ca.crt. */
  workers: z
    .strictObject({
      dir: tlsDir,
      /** The name workers' certificates carry, where it is not the host dialled (pod IPs). */
      serverName: z.string().min(1).optional(),
    })
    .optional(),
  /** The front door (gRPC and HTTPS). clientAuth: clients must present a certificate ca.crt verifies. */
  frontDoor: z.strictObject({ dir: tlsDir, clientAuth: z.boolean().default(false) }).optional(),
});

export const routerConfigSchema = z.strictObject({
  host: z.string().min(1).default("127.0.0.1"),
  /** gRPC front door (tessera.v1.Inference, health, reflection); 0 picks a free port. */
  grpcPort: port.default(50050),
  /** OpenAI-compatible HTTP front door; 0 picks a free port. */
  httpPort: port.default(8080),
  /** Prometheus /metrics; unset: none. */
  metricsPort: port.optional(),
  /** How long requests in flight may run after SIGTERM. */
  drainTimeoutMs: z.int().min(0).default(30_000),
  models: z
    .array(
      z.strictObject({
        /** The id requests use; it must match the id the workers report in ListModels. */
        id: z.string().min(1),
        /** Checkpoint folder with tokenizer.json and tokenizer_config.json. */
        tokenizer: z.string().min(1),
        /** Largest max_tokens a request may ask for (default: the model's context). */
        maxTokens: z.int().min(1).optional(),
        /** How the model writes tool calls, as vLLM's --tool-call-parser (default: what its chat template shows). */
        toolCallParser: z.enum(TOOL_CALL_PARSER_NAMES).optional(),
      }),
    )
    .min(1),
  discovery: z.discriminatedUnion("type", [staticDiscovery, kubernetesDiscovery]),
  tls: tlsConfig.prefault({}),
  routing: routingConfigSchema.prefault({}),
  health: z
    .strictObject({
      /** Watch grpc.health.v1 on every endpoint. */
      watch: z.boolean().default(true),
      /** The health service name watched. */
      service: z.string().default("tessera.v1.Inference"),
      /**
       * The health service of a worker's KV transfer path (its Redis tier): disaggregated requests and
       * migrations only go to endpoints where it is SERVING.
       */
      kvService: z.string().min(1).default("tessera.v1.KvTransfer"),
      /**
       * Reconnecting to an endpoint that went away (its health watch, ListModels, grpc-js's own
       * connection attempts): from reconnectBaseMs doubling to reconnectMaxMs. Kept short so that a
       * restarted worker gets requests within about a second of serving again; one attempt is one
       * TCP connect.
       */
      reconnectBaseMs: z.int().min(1).default(500),
      reconnectMaxMs: z.int().min(1).default(1_000),
      /** How often each endpoint's load is read (0: never). */
      loadPollMs: z.int().min(0).default(200),
      /** A load report older than this is not used. */
      loadMaxAgeMs: z.int().min(1).default(2_000),
      /** Half-life of the time-to-first-token average per endpoint. */
      latencyHalfLifeMs: z.int().min(1).default(10_000),
    })
    .prefault({}),
  outliers: z
    .strictObject({
      consecutiveFailures: z.int().min(1).default(3),
      baseEjectionMs: z.int().min(1).default(1_000),
      maxEjectionMs: z.int().min(1).default(60_000),
    })
    .prefault({}),
  failover: z
    .strictObject({
      /** Endpoints tried for a request that fails before its first token. */
      maxAttempts: z.int().min(1).max(10).default(3),
      /**
       * Times a stream whose worker fails mid-way is resumed on another replica from the tokens already
       * streamed (its KV read from the remote tier); 0: never, the stream ends with UNAVAILABLE.
       */
      maxMigrations: z.int().min(0).max(10).default(2),
    })
    .prefault({}),
  cache: z
    .strictObject({
      /** Answer repeated deterministic requests (temperature 0 or a seed) from memory. */
      enabled: z.boolean().default(true),
      maxEntries: z.int().min(0).default(4_096),
      maxBytes: z
        .int()
        .min(0)
        .default(64 * 1024 * 1024),
      ttlMs: z.int().min(1).default(600_000),
      /** Identical deterministic requests in flight share one generation. */
      coalesce: z.boolean().default(true),
      /**
       * Redis behind the in-process cache, shared by router replicas (cache/shared-response-cache.ts);
       * unset: in-process only.
       */
      redis: z
        .strictObject({
          url: z.string().regex(/^rediss?:\/\//, "a redis:// or rediss:// URL"),
          keyPrefix: z.string().default("tessera:router-cache:"),
          timeoutMs: z.int().min(1).max(10_000).default(50),
          /** The environment variable holding Redis's password (kept out of the config and the URL). */
          passwordEnv: z
            .string()
            .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "an environment variable name")
            .optional(),
        })
        .optional(),
    })
    .prefault({}),
  admission: z
    .strictObject({
      /** Requests per model running upstream at once, per eligible endpoint. */
      maxInFlightPerEndpoint: z.int().min(1).default(64),
      /** Requests per model waiting for a slot; more are refused (RESOURCE_EXHAUSTED / 429). */
      maxQueue: z.int().min(0).default(256),
      /** The retry hint sent with a refusal. */
      retryAfterMs: z.int().min(0).default(1_000),
      /** API keys and their rate limits (see admission/api-keys.ts); unset: no authentication. */
      apiKeysFile: z.string().min(1).optional(),
      /** How often the API keys file is re-read for a new version (a rotated Secret). */
      apiKeysReloadMs: z.int().min(100).default(10_000),
      /** Largest request message (gRPC) or body (HTTP). */
      maxRequestBytes: z
        .int()
        .min(1_024)
        .default(4 * 1024 * 1024),
      /** Deadline of requests that bring none (gRPC deadline); unset: none. */
      defaultTimeoutMs: z.int().min(1).optional(),
    })
    .prefault({}),
  /**
   * OpenAI's Batch API (/v1/files, /v1/batches; router/batch/): files and batch state live in `dir`
   * (a PersistentVolume in a cluster), so a restarted router resumes its running batches. Unset dir:
   * the Batch API answers 404.
   */
  batch: z
    .strictObject({
      dir: z.string().min(1).optional(),
      /** Lines of one batch in flight at once (the rest wait), so batches never crowd out interactive requests. */
      maxInFlight: z.int().min(1).default(16),
      /** Priority of batch lines at the workers: interactive requests (0) are scheduled first. */
      priority: z.int().min(1).default(10),
      /** Largest file accepted by POST /v1/files. */
      maxFileBytes: z
        .int()
        .min(1_024)
        .default(200 * 1024 * 1024),
    })
    .prefault({}),
});

export type RouterConfig = z.infer<typeof routerConfigSchema>;

/** Validates a raw config, its routing plugins included; relative paths are resolved against `baseDir`. */
export function parseRouterConfig(raw: unknown, baseDir: string): Result<RouterConfig> {
  const parsed = routerConfigSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const field = issue?.path.map(String).join(".") || "config";
    return { error: TesseraError.invalidArgument(field, issue?.message ?? "invalid") };
  }
  const config = parsed.data;
  const plugins = createPlugins(config.routing, {
    random: Math.random,
    log: createLogger("router", "silent"),
  });
  if (plugins.error) return plugins;
  const resolve = (p: string) => path.resolve(baseDir, p);
  config.models = config.models.map((m) => ({ ...m, tokenizer: resolve(m.tokenizer) }));
  if (config.discovery.type === "static") config.discovery.file = resolve(config.discovery.file);
  if (config.discovery.type === "kubernetes" && config.discovery.kubeconfig !== undefined)
    config.discovery.kubeconfig = resolve(config.discovery.kubeconfig);
  if (config.tls.workers) config.tls.workers.dir = resolve(config.tls.workers.dir);
  if (config.tls.frontDoor) config.tls.frontDoor.dir = resolve(config.tls.frontDoor.dir);
  if (config.admission.apiKeysFile !== undefined)
    config.admission.apiKeysFile = resolve(config.admission.apiKeysFile);
  if (config.batch.dir !== undefined) config.batch.dir = resolve(config.batch.dir);
  return { value: config };
}

/** A config given inline as JSON (`tessera router --config-json`, what the operator passes). */
export function parseRouterConfigJson(json: string, baseDir: string): Result<RouterConfig> {
  let raw: unknown;
  try {
    raw = JSON.parse(json);
  } catch (err) {
    return { error: TesseraError.invalidArgument("config", `not JSON: ${(err as Error).message}`) };
  }
  return parseRouterConfig(raw, baseDir);
}

export function loadRouterConfig(file: string): Result<RouterConfig> {
  let raw: unknown;
  try {
    raw = parseYaml(readFileSync(file, "utf8"));
  } catch (err) {
    return {
      error: new TesseraError(Code.INVALID_ARGUMENT, `cannot read config ${file}: ${(err as Error).message}`),
    };
  }
  return parseRouterConfig(raw, path.dirname(path.resolve(file)));
}
