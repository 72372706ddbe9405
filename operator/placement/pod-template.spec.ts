import assert from "node:assert/strict";
import { MODEL_REF, modelSpec, poolSpec, pools } from "../testing/fixtures.ts";
import { restrictedViolations } from "../testing/pod-security.ts";
import { planPlacement } from "./planner.ts";
import { mergeAffinity, mergeResources, shardPod } from "./pod-template.ts";

type Container = {
  command: string[];
  args: string[];
  env: { name: string; value?: string; valueFrom?: unknown }[];
  resources: unknown;
  volumeMounts: unknown[];
};

function podOf(
  specOverrides: Parameters<typeof modelSpec>[0],
  poolOverrides: Parameters<typeof poolSpec>[0] = {},
  index = 0,
) {
  const spec = modelSpec(specOverrides);
  const plan = planPlacement({ model: MODEL_REF, spec, pools: pools({ default: poolOverrides }) });
  const group = plan.groups[0]!;
  const pod = shardPod(MODEL_REF, spec, poolSpec(poolOverrides), group, group.shards[index]!);
  const podSpec = pod["spec"] as {
    containers: Container[];
    volumes: unknown[];
    hostname: string;
    subdomain: string;
  };
  const container = podSpec.containers[0]!;
  const env = Object.fromEntries(container.env.map((e) => [e.name, e.value ?? e.valueFrom]));
  return { pod, podSpec, container, env, plan };
}

describe("shard pod template", () => {
  it("meets the restricted Pod Security profile", () => {
    const { pod } = podOf({ model: { path: "tiny", pvc: { claimName: "weights" } } });
    assert.deepEqual(restrictedViolations(pod), []);
  });

  it("runs `serve` on the pod IP with the pool's command and tells the shard its place", () => {
    const { pod, podSpec, container, env, plan } = podOf(
      { model: { numLayers: 8 }, parallelism: { tensor: 2, pipeline: 2 }, engine: { blockSize: 32 } },
      { command: ["node", "/app/services/cli/main.ts"] },
      3,
    );
    const rev = plan.revisions.both!;
    assert.equal(pod.metadata.name, `tiny-both-0-s1-t1-${rev}`);
    assert.deepEqual([podSpec.hostname, podSpec.subdomain], [`both-0-s1-t1-${rev}`, "tiny-workers"]);
    assert.deepEqual(container.command, ["node", "/app/services/cli/main.ts"]);
    assert.deepEqual(container.args, [
      "serve",
      "--model",
      "/models/tiny",
      "--host",
      "$(POD_IP)",
      "--port",
      "50051",
      "--metrics-port",
      "9090",
      "--block-size",
      "32",
      "--max-batched-tokens",
      "256",
      "--max-running-requests",
      "64",
    ]);
    assert.deepEqual(env["POD_IP"], { fieldRef: { fieldPath: "status.podIP" } });
    assert.equal(env["TESSERA_STAGE"], "1");
    assert.equal(env["TESSERA_TENSOR_RANK"], "1");
    assert.equal(env["TESSERA_RANK"], "3");
    assert.equal(env["TESSERA_WORLD_SIZE"], "4");
    assert.deepEqual([env["TESSERA_LAYER_START"], env["TESSERA_LAYER_END"]], ["4", "8"]);
    assert.equal(String(env["TESSERA_PEERS"]).split(",").length, 4);
    assert.equal(pod.metadata.labels?.["serving.tessera.dev/revision"], rev);
    assert.equal(pod.metadata.annotations?.["serving.tessera.dev/group-size"], "4");
    assert.deepEqual(pod.metadata.ownerReferences?.[0], {
      apiVersion: "serving.tessera.dev/v1alpha1",
      kind: "InferenceModel",
      name: "tiny",
      uid: "uid-1",
      controller: true,
      blockOwnerDeletion: true,
    });
  });

  it("passes every engine setting as a serve flag", () => {
    const { container } = podOf({
      engine: { kvCacheBlocks: 200, enablePrefixCaching: false, maxNumSeqs: 8 },
    });
    assert.deepEqual(container.args.slice(9), [
      "--block-size",
      "16",
      "--kv-cache-blocks",
      "200",
      "--max-batched-tokens",
      "256",
      "--max-running-requests",
      "8",
      "--no-prefix-caching",
    ]);
  });

  it("tells the workers the model's quantization (TESSERA_QUANTIZATION), and nothing for none", () => {
    assert.equal(
      podOf({ model: { path: "/models/tiny", quantization: "int4" } }).env["TESSERA_QUANTIZATION"],
      "int4",
    );
    assert.equal(
      podOf({ model: { path: "/models/tiny", quantization: "int8" } }).env["TESSERA_QUANTIZATION"],
      "int8",
    );
    assert.equal("TESSERA_QUANTIZATION" in podOf({}).env, false);
  });

  it("tells the workers the model's speculative decoding as vLLM's JSON (TESSERA_SPECULATIVE_CONFIG), a draft below the PVC", () => {
    const ngram = { method: "ngram", numSpeculativeTokens: 4, promptLookupMax: 3 } as const;
    assert.deepEqual(
      JSON.parse(
        String(
          podOf({ model: { path: "/models/tiny", speculative: ngram } }).env["TESSERA_SPECULATIVE_CONFIG"],
        ),
      ),
      { method: "ngram", num_speculative_tokens: 4, prompt_lookup_max: 3 },
    );
    const draft = {
      method: "draft_model",
      draftModelPath: "tiny-draft",
      numSpeculativeTokens: 3,
      disableByBatchSize: 8,
    } as const;
    const pvc = { claimName: "weights" };
    assert.deepEqual(
      JSON.parse(
        String(podOf({ model: { path: "tiny", pvc, speculative: draft } }).env["TESSERA_SPECULATIVE_CONFIG"]),
      ),
      {
        method: "draft_model",
        model: "/models/tiny-draft",
        num_speculative_tokens: 3,
        disable_by_batch_size: 8,
      },
    );
    assert.equal("TESSERA_SPECULATIVE_CONFIG" in podOf({}).env, false);
  });

  it("mounts a PVC read-only and reads the model below it", () => {
    const { container, podSpec } = podOf({ model: { path: "llama/7b", pvc: { claimName: "weights" } } });
    assert.equal(container.args[2], "/models/llama/7b");
    assert.deepEqual(podSpec.volumes[1], {
      name: "models",
      persistentVolumeClaim: { claimName: "weights", readOnly: true },
    });
    assert.deepEqual(container.volumeMounts[1], { name: "models", mountPath: "/models", readOnly: true });
  });

  it("passes the KV store and its password Secret to disaggregated workers", () => {
    const { env } = podOf({
      serving: { mode: "disaggregated" },
      kvTransfer: {
        redis: { address: "redis:6379", passwordSecret: { name: "redis" } },
        failurePolicy: "fail",
      },
    });
    assert.equal(env["TESSERA_KV_URL"], "redis://redis:6379/0");
    assert.equal(env["TESSERA_KV_KEY_PREFIX"], "tessera:kv:ml:tiny:");
    assert.equal(env["TESSERA_KV_TTL_MS"], "600000");
    assert.equal(env["TESSERA_KV_TIMEOUT_MS"], "2000", "the store's deadline, default 2 s");
    assert.equal(env["TESSERA_KV_FAILURE_POLICY"], "fail");
    assert.deepEqual(env["TESSERA_KV_PASSWORD"], { secretKeyRef: { name: "redis", key: "password" } });
  });

  it("merges the model's resources over the pool's, per resource", () => {
    assert.deepEqual(
      mergeResources(
        { requests: { cpu: "4", "nvidia.com/gpu": 1 }, limits: { "nvidia.com/gpu": 1 } },
        { requests: { cpu: "2", memory: "8Gi" } },
      ),
      { requests: { cpu: "2", "nvidia.com/gpu": 1, memory: "8Gi" }, limits: { "nvidia.com/gpu": 1 } },
    );
    assert.deepEqual(mergeResources({}, {}), {});
  });

  it("keeps the pool's affinity and adds: a replica together, replicas apart", () => {
    const { plan } = podOf({});
    const nodeAffinity = { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [] } };
    const poolTerm = { weight: 1, podAffinityTerm: { topologyKey: "zone" } };
    const merged = mergeAffinity(
      { nodeAffinity, podAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [poolTerm] } },
      MODEL_REF,
      plan.groups[0]!,
    ) as Record<string, { preferredDuringSchedulingIgnoredDuringExecution: { weight: number }[] }>;
    assert.deepEqual(merged["nodeAffinity"], nodeAffinity);
    assert.deepEqual(
      merged["podAffinity"]!.preferredDuringSchedulingIgnoredDuringExecution.map((t) => t.weight),
      [1, 100],
    );
    assert.deepEqual(
      merged["podAntiAffinity"]!.preferredDuringSchedulingIgnoredDuringExecution.map((t) => t.weight),
      [50],
    );
  });
});
