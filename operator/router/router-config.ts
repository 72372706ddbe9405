// The config of the router the operator runs for an InferenceModel (pure): one model (its served
// name, tokenized from the checkpoint's own tokenizer.json), Kubernetes discovery of this model's
// shards (status.shards), and spec.routing turned into the router's plugin pipeline:
//   consistent-hash  scorers consistent-hash (weights.prefix, epsilon), load (weights.load) and
//                    least-latency (weights.latency), each only with a weight > 0; picker max-score
//   least-load       scorer load, picker max-score
//   least-latency    scorer least-latency, picker max-score
//   round-robin      no scorer, picker round-robin
//   random           no scorer, picker random
//   power-of-two     scorer load, picker power-of-two (two at random, the less loaded wins)
// With spec.kvTransfer.redis the response cache is shared through that Redis (password from its Secret);
// with spec.routing.apiKeysSecret the router authenticates callers with the keys file that Secret holds.
// The router takes it as `tessera router --config-json JSON` (services/router/config/router-config.ts
// validates it at start-up), so a routing change changes the pod template and rolls the router.

import type { InferenceModelSpec } from "../../services/api/inference-model-spec.ts";
import {
  CONSISTENT_HASH,
  LEAST_LATENCY,
  LOAD,
  MAX_SCORE,
  POWER_OF_TWO,
  RANDOM,
  ROUND_ROBIN,
} from "../../services/api/routing-plugins.ts";
import type { ModelRef } from "../placement/planner.ts";
import { kvKeyPrefix, kvStoreUrl, modelDir } from "../placement/shard-env.ts";

/** gRPC (tessera.v1.Inference + grpc.health.v1), OpenAI HTTP and Prometheus ports of the router. */
export const ROUTER_GRPC_PORT = 50050;
export const ROUTER_HTTP_PORT = 8080;
export const ROUTER_METRICS_PORT = 9090;

type Routing = InferenceModelSpec["routing"];

interface PluginEntry {
  type: string;
  weight?: number;
  epsilon?: number;
}

export interface RoutingPipelineConfig {
  prefixBlocks: number;
  sessionHeader: string;
  scorers: PluginEntry[];
  picker: { type: string };
}

export function routingPipeline(routing: Routing): RoutingPipelineConfig {
  const pipeline = (scorers: PluginEntry[], picker: string) => ({
    prefixBlocks: routing.prefixBlocks,
    sessionHeader: routing.sessionHeader,
    scorers,
    picker: { type: picker },
  });
  switch (routing.strategy) {
    case "consistent-hash": {
      const { prefix, load, latency } = routing.weights;
      const scorers: PluginEntry[] = [
        { type: CONSISTENT_HASH, weight: prefix, epsilon: routing.epsilon },
        { type: LOAD, weight: load },
        { type: LEAST_LATENCY, weight: latency },
      ];
      return pipeline(
        scorers.filter((s) => (s.weight ?? 0) > 0),
        MAX_SCORE,
      );
    }
    case "least-load":
      return pipeline([{ type: LOAD, weight: 1 }], MAX_SCORE);
    case "least-latency":
      return pipeline([{ type: LEAST_LATENCY, weight: 1 }], MAX_SCORE);
    case "round-robin":
      return pipeline([], ROUND_ROBIN);
    case "random":
      return pipeline([], RANDOM);
    case "power-of-two":
      return pipeline([{ type: LOAD, weight: 1 }], POWER_OF_TWO);
    default:
      return assertNever(routing.strategy);
  }
}

/** Where router pods mount spec.routing.apiKeysSecret, and the file the router reads there. */
export const ROUTER_API_KEYS_DIR = "/etc/tessera/api-keys";
export const ROUTER_API_KEYS_FILE = `${ROUTER_API_KEYS_DIR}/api-keys.yaml`;

/** The variable the router pods read the KV store's password from (the Secret of kvTransfer.redis). */
export const ROUTER_CACHE_PASSWORD_ENV = "TESSERA_CACHE_REDIS_PASSWORD";

/** The router config (services/router/config/router-config.ts) of one model's router. */
export function routerConfig(model: ModelRef, spec: InferenceModelSpec): Record<string, unknown> {
  const redis = spec.kvTransfer.redis;
  return {
    grpcPort: ROUTER_GRPC_PORT,
    httpPort: ROUTER_HTTP_PORT,
    metricsPort: ROUTER_METRICS_PORT,
    models: [{ id: spec.model.servedName ?? model.name, tokenizer: modelDir(spec) }],
    discovery: { type: "kubernetes", namespace: model.namespace, inferenceModel: model.name },
    routing: routingPipeline(spec.routing),
    ...(spec.routing.apiKeysSecret && { admission: { apiKeysFile: ROUTER_API_KEYS_FILE } }),
    // With a KV store the router pods share their response cache in it, under the model's key prefix
    // (so the model's finalizer removes those keys too): a deterministic request one router pod
    // answered is a hit on the others.
    ...(redis && {
      cache: {
        redis: {
          url: kvStoreUrl(redis),
          keyPrefix: `${kvKeyPrefix(model)}router-cache:`,
          ...(redis.passwordSecret && { passwordEnv: ROUTER_CACHE_PASSWORD_ENV }),
        },
      },
    }),
  };
}

function assertNever(value: never): never {
  throw new Error(`unexpected routing strategy ${JSON.stringify(value)}`);
}
