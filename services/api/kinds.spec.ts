import assert from "node:assert/strict";
import { inferenceModelSpecSchema } from "./inference-model-spec.ts";
import { inferenceModelKind, KINDS, workerPoolKind } from "./kinds.ts";
import { type OpenApiSchema, structuralSchema } from "./schema-kit.ts";
import { workerPoolSpecSchema } from "./worker-pool.ts";

type Node = Record<string, unknown>;

/** Every property path of a schema with its node: spec.model.path, spec.resources.requests.* ... */
function walk(
  node: Node,
  path: string,
  out: Map<string, { node: Node; required: boolean }>,
  required = false,
) {
  out.set(path, { node, required });
  const properties = (node["properties"] ?? {}) as Record<string, Node>;
  const requiredKeys = (node["required"] ?? []) as string[];
  for (const [key, child] of Object.entries(properties))
    walk(child, `${path}.${key}`, out, requiredKeys.includes(key));
  if (node["items"]) walk(node["items"] as Node, `${path}[]`, out, true);
  if (typeof node["additionalProperties"] === "object")
    walk(node["additionalProperties"] as Node, `${path}.*`, out, true);
  return out;
}

const fields = (schema: OpenApiSchema, root: string) => walk(schema as Node, root, new Map());

describe("CRD kinds", () => {
  it("documents every field of every kind", () => {
    for (const kind of KINDS) {
      for (const [part, schema] of [
        ["spec", kind.spec],
        ["status", kind.status],
      ] as const) {
        const undocumented = [...fields(structuralSchema(schema), part)]
          .filter(([path, { node }]) => !path.endsWith("[]") && !path.endsWith(".*") && !node["description"])
          .map(([path]) => path);
        assert.deepEqual(undocumented, [], `${kind.kind} fields without description`);
      }
    }
  });

  it("defaults every optional spec field except those whose absence means something", () => {
    const optionalWithoutDefault = (schema: OpenApiSchema) =>
      [...fields(schema, "spec")]
        .filter(([path, { node, required }]) => path !== "spec" && !required && node["default"] === undefined)
        .map(([path]) => path);
    assert.deepEqual(optionalWithoutDefault(structuralSchema(inferenceModelSpecSchema)), [
      "spec.model.pvc",
      "spec.model.servedName",
      // Unset: no speculative decoding; its optional fields follow vLLM's defaults (speculative-config.ts).
      "spec.model.speculative",
      "spec.model.speculative.draftModelPath",
      "spec.model.speculative.promptLookupMax",
      "spec.model.speculative.promptLookupMin",
      "spec.model.speculative.disableByBatchSize",
      "spec.model.numLayers",
      "spec.pools.prefill",
      "spec.pools.decode",
      "spec.routing.apiKeysSecret",
      "spec.kvTransfer.redis",
      "spec.kvTransfer.redis.passwordSecret",
      // Unset: plaintext between components, certificates naming the pod IPs, a plaintext front door.
      "spec.tls",
      "spec.tls.secretName",
      "spec.tls.serverName",
      "spec.tls.frontDoor",
      "spec.resources.requests",
      "spec.resources.limits",
    ]);
    assert.deepEqual(optionalWithoutDefault(structuralSchema(workerPoolSpecSchema)), [
      "spec.resources.requests",
      "spec.resources.limits",
      "spec.nodeSelector",
      "spec.tolerations",
      "spec.tolerations[].key",
      "spec.tolerations[].value",
      "spec.tolerations[].effect",
      "spec.tolerations[].tolerationSeconds",
      "spec.affinity",
      "spec.runtimeClassName",
    ]);
  });

  it("parses a minimal spec into the fully defaulted one the API server stores", () => {
    const spec = inferenceModelSpecSchema.parse({ model: { path: "/models/tiny" } });
    assert.deepEqual(spec, {
      model: { path: "/models/tiny", architecture: "auto", dtype: "auto", quantization: "none" },
      parallelism: { tensor: 1, pipeline: 1 },
      replicas: 1,
      serving: { mode: "colocated", prefillReplicas: 1 },
      pools: { default: "default" },
      engine: {
        blockSize: 16,
        kvCacheBlocks: 0,
        maxNumBatchedTokens: 256,
        maxNumSeqs: 64,
        enablePrefixCaching: true,
      },
      routing: {
        strategy: "consistent-hash",
        weights: { prefix: 1, load: 0, latency: 0 },
        epsilon: 0.25,
        prefixBlocks: 8,
        sessionHeader: "x-session-id",
        replicas: 1,
      },
      kvTransfer: { ttlSeconds: 600, timeoutMs: 2000, failurePolicy: "recompute" },
      resources: {},
    });
    assert.deepEqual(workerPoolSpecSchema.parse({}), {
      image: "ghcr.io/tessera-dev/tessera:0.1.0",
      imagePullPolicy: "IfNotPresent",
      command: ["tessera"],
      resources: {},
      minPods: 0,
      maxPods: 64,
    });
  });

  it("has the printer columns and subresources kubectl and autoscalers use", () => {
    assert.deepEqual(
      inferenceModelKind.columns.map((c) => c.name),
      ["Model", "Mode", "Replicas", "Ready", "Status", "Age"],
    );
    assert.deepEqual(inferenceModelKind.scale, {
      specReplicasPath: ".spec.replicas",
      statusReplicasPath: ".status.replicas",
      labelSelectorPath: ".status.selector",
    });
    assert.equal(workerPoolKind.scale, undefined);
  });
});
