// The generated CRDs in a dev cluster API (in process): defaults, and invalid objects rejected with
// the field named, for the schema bounds and every CEL rule.
import assert from "node:assert/strict";
import type { ResourceRef } from "../../devtools/devcluster/apiserver/cluster/api-types.ts";
import { CRDS, testCluster } from "../../devtools/devcluster/apiserver/cluster/test-cluster.ts";
import { toStatus } from "../../devtools/devcluster/apiserver/core/api-status.ts";
import type { KubeObject } from "../kube/kube-object.ts";
import { crdOf } from "./crd-builder.ts";
import { API_VERSION, GROUP, VERSION } from "./group.ts";
import { KINDS } from "./kinds.ts";

const MODELS: ResourceRef = { group: GROUP, version: VERSION, resource: "inferencemodels" };
const POOLS: ResourceRef = { group: GROUP, version: VERSION, resource: "workerpools" };

const model = (name: string, spec: Record<string, unknown>): KubeObject => ({
  apiVersion: API_VERSION,
  kind: "InferenceModel",
  metadata: { name },
  spec: { model: { path: "/models/tiny" }, ...spec },
});

describe("CRD validation in the dev cluster API", () => {
  let cluster: ReturnType<typeof testCluster>;
  const errorOf = (fn: () => unknown) => {
    try {
      fn();
    } catch (err) {
      const status = toStatus(err);
      return {
        code: status.code,
        message: status.message,
        fields: status.details?.causes?.map((c) => c.field),
      };
    }
    assert.fail("expected the API to reject the object");
  };

  beforeEach(() => {
    cluster = testCluster();
    for (const kind of KINDS) cluster.api.create(CRDS, "", crdOf(kind) as unknown as KubeObject);
  });

  it("stores a minimal InferenceModel with every default filled in", () => {
    const stored = cluster.api.create(MODELS, "default", model("tiny", {}));
    const spec = stored["spec"] as Record<string, Record<string, unknown>>;
    assert.deepEqual(spec["parallelism"], { tensor: 1, pipeline: 1 });
    assert.equal(spec["replicas"] as unknown, 1);
    assert.equal(spec["routing"]?.["strategy"], "consistent-hash");
    assert.deepEqual(spec["kvTransfer"], { ttlSeconds: 600, timeoutMs: 2000, failurePolicy: "recompute" });
    const pool = cluster.api.create(POOLS, "default", {
      apiVersion: API_VERSION,
      kind: "WorkerPool",
      metadata: { name: "default" },
      spec: {},
    });
    assert.equal((pool["spec"] as Record<string, unknown>)["maxPods"], 64);
  });

  const invalid: [string, Record<string, unknown>, string, RegExp][] = [
    ["a negative replica count", { replicas: -1 }, "spec.replicas", /greater than or equal to 0/],
    ["an unknown serving mode", { serving: { mode: "split" } }, "spec.serving.mode", /Unsupported value/],
    [
      "tensor parallelism not a power of two",
      { parallelism: { tensor: 3 } },
      "spec.parallelism.tensor",
      /power of two/,
    ],
    [
      "pipeline stages without the layer count",
      { parallelism: { pipeline: 2 } },
      "spec.parallelism.pipeline",
      /must not exceed model\.numLayers/,
    ],
    [
      "more pipeline stages than layers",
      { model: { path: "/m", numLayers: 2 }, parallelism: { pipeline: 4 } },
      "spec.parallelism.pipeline",
      /must not exceed model\.numLayers/,
    ],
    [
      "disaggregated serving without a KV store",
      { serving: { mode: "disaggregated" } },
      "spec.kvTransfer.redis",
      /needs a KV transfer store/,
    ],
    [
      "a relative path without a volume",
      { model: { path: "models/tiny" } },
      "spec.model.path",
      /must be absolute/,
    ],
    [
      "an absolute path on a volume",
      { model: { path: "/tiny", pvc: { claimName: "weights" } } },
      "spec.model.path",
      /relative to the volume/,
    ],
    [
      "per-role pools when colocated",
      { pools: { prefill: "big" } },
      "spec.pools",
      /need serving.mode disaggregated/,
    ],
    [
      "a served name with a space",
      { model: { path: "/m", servedName: "my model" } },
      "spec.model.servedName",
      /should match/,
    ],
    [
      "a draft model without its path",
      { model: { path: "/m", speculative: { method: "draft_model", numSpeculativeTokens: 3 } } },
      "spec.model.speculative.draftModelPath",
      /draft_model needs draftModelPath/,
    ],
    [
      "n-gram lookup bounds the wrong way round",
      {
        model: {
          path: "/m",
          speculative: { method: "ngram", numSpeculativeTokens: 3, promptLookupMin: 4, promptLookupMax: 2 },
        },
      },
      "spec.model.speculative.promptLookupMin",
      /promptLookupMin must be <= promptLookupMax/,
    ],
    [
      "a malformed quantity",
      { resources: { requests: { cpu: "two" } } },
      "spec.resources.requests.cpu",
      /should match/,
    ],
  ];
  for (const [what, spec, field, message] of invalid) {
    it(`rejects ${what}, naming ${field}`, () => {
      const error = errorOf(() => cluster.api.create(MODELS, "default", model("bad", spec)));
      assert.equal(error.code, 422);
      assert.ok(error.fields?.includes(field), `${JSON.stringify(error.fields)} should include ${field}`);
      assert.match(error.message, message);
    });
  }

  it("rejects a name too long to prefix pod names", () => {
    const error = errorOf(() => cluster.api.create(MODELS, "default", model("m".repeat(41), {})));
    assert.match(error.message, /DNS label of at most 40 characters/);
  });

  it("keeps serving.mode immutable; model.servedName may change (the pods roll to serve the new name)", () => {
    const created = cluster.api.create(
      MODELS,
      "default",
      model("tiny", { model: { path: "/m", servedName: "tiny-v1" } }),
    );
    const update = (spec: Record<string, unknown>) =>
      cluster.api.update(MODELS, "default", "tiny", {
        ...created,
        spec: { ...(created["spec"] as object), ...spec },
      });
    const mode = errorOf(() =>
      update({ serving: { mode: "disaggregated" }, kvTransfer: { redis: { address: "redis:6379" } } }),
    );
    assert.ok(mode.fields?.includes("spec.serving.mode"));
    assert.match(mode.message, /serving.mode is immutable/);
    const renamed = update({ model: { path: "/m", servedName: "Qwen/Qwen2.5-0.5B-Instruct" } });
    assert.equal(
      (renamed["spec"] as { model: { servedName: string } }).model.servedName,
      "Qwen/Qwen2.5-0.5B-Instruct",
    );
  });

  it("checks a WorkerPool's pod bounds", () => {
    const error = errorOf(() =>
      cluster.api.create(POOLS, "default", {
        apiVersion: API_VERSION,
        kind: "WorkerPool",
        metadata: { name: "p" },
        spec: { minPods: 5, maxPods: 2 },
      }),
    );
    assert.match(error.message, /minPods must not exceed maxPods/);
  });
});
