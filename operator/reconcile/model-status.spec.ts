import assert from "node:assert/strict";
import type { InferenceModelStatus } from "../../services/api/inference-model-status.ts";
import { type PlacementPlan, planPlacement } from "../placement/planner.ts";
import type { ObservedPod } from "../placement/pod-state.ts";
import { planRollout } from "../placement/rollout.ts";
import { MODEL_REF, modelSpec, pools } from "../testing/fixtures.ts";
import { modelStatus } from "./model-status.ts";
import type { ServedNamesAnswer, ServedNamesByPod } from "./served-names.ts";

const T0 = "2025-01-01T00:00:00Z";
const T1 = "2025-01-01T00:01:00Z";

function observed(p: PlacementPlan, state: Partial<ObservedPod> = {}, replicas?: number[]): ObservedPod[] {
  return p.groups
    .filter((g) => replicas === undefined || replicas.includes(g.replica))
    .flatMap((g) =>
      g.shards.map((s) => ({
        name: s.podName,
        role: g.role,
        replica: g.replica,
        stage: s.stage,
        rank: s.rank,
        revision: g.revision,
        groupSize: s.worldSize,
        podIP: `127.0.1.${g.replica * 10 + s.globalRank + 1}`,
        ready: true,
        failed: false,
        restarted: false,
        terminating: false,
        ...state,
      })),
    );
}

function status(
  specOverrides: Parameters<typeof modelSpec>[0],
  pods: (p: PlacementPlan) => ObservedPod[],
  previous?: InferenceModelStatus,
  now = T0,
  maxPods = 64,
  router?: { endpoint: string; available: boolean },
  servedNames?: (pods: ObservedPod[]) => ServedNamesByPod,
) {
  const spec = modelSpec(specOverrides);
  const plan = planPlacement({ model: MODEL_REF, spec, pools: pools({ default: { maxPods } }) });
  const obs = pods(plan);
  return modelStatus({
    name: "tiny",
    generation: 2,
    spec,
    plan,
    observed: obs,
    actions: planRollout(plan, obs),
    previous,
    now,
    router,
    servedNames: servedNames?.(obs),
  });
}

const conditions = (s: InferenceModelStatus) =>
  s.conditions?.map((c) => `${c.type}=${c.status}/${c.reason}: ${c.message}`);

describe("model status", () => {
  it("reports a new model as creating pods and not ready", () => {
    const s = status({ replicas: 2 }, () => []);
    assert.deepEqual(conditions(s), [
      "Ready=False/NoReplicaReady: 0/2 replicas ready",
      "Progressing=True/CreatingPods: creating 2 pods",
      "Degraded=False/AsExpected: ",
    ]);
    assert.deepEqual([s.replicas, s.readyReplicas, s.updatedReplicas, s.observedGeneration], [0, 0, 0, 2]);
    assert.equal(s.selector, "serving.tessera.dev/model=tiny");
    assert.equal(s.servedName, "tiny");
  });

  it("registers every shard with its endpoint, and is Ready once the groups are", () => {
    const s = status({ replicas: 1, model: { numLayers: 4 }, parallelism: { pipeline: 2 } }, (p) =>
      observed(p),
    );
    assert.deepEqual(conditions(s), [
      "Ready=True/ReplicasReady: 1/1 replicas ready",
      "Progressing=False/Converged: every pod runs the current revision",
      "Degraded=False/AsExpected: ",
    ]);
    assert.deepEqual(
      s.shards?.map((sh) => [sh.role, sh.replica, sh.stage, sh.rank, sh.endpoint, sh.ready, sh.entry]),
      [
        ["both", 0, 0, 0, "127.0.1.1:50051", true, true],
        ["both", 0, 1, 0, "127.0.1.2:50051", true, false],
      ],
    );
  });

  it("names the router's Service in routerEndpoint, and is Ready only once the router is available", () => {
    const endpoint = "tiny-router.ml.svc:50050";
    const waiting = status({ replicas: 1 }, (p) => observed(p), undefined, T0, 64, {
      endpoint,
      available: false,
    });
    assert.equal(waiting.routerEndpoint, endpoint);
    assert.equal(
      conditions(waiting)?.[0],
      "Ready=False/RouterNotAvailable: 1/1 replicas ready, router not available",
    );
    const ready = status({ replicas: 1 }, (p) => observed(p), waiting, T1, 64, { endpoint, available: true });
    assert.equal(conditions(ready)?.[0], "Ready=True/ReplicasReady: 1/1 replicas ready");
    assert.equal(ready.conditions?.[0]?.lastTransitionTime, T1);
    const noReplica = status({ replicas: 1 }, () => [], undefined, T0, 64, { endpoint, available: true });
    assert.equal(conditions(noReplica)?.[0], "Ready=False/NoReplicaReady: 0/1 replicas ready");
  });

  describe("the served name", () => {
    /** Every entry pod (stage 0, rank 0) answers `answer(pod)`. */
    const answering =
      (answer: (pod: ObservedPod) => ServedNamesAnswer | undefined) =>
      (pods: ObservedPod[]): ServedNamesByPod =>
        new Map(
          pods.flatMap((p) => {
            const a = p.stage === 0 && p.rank === 0 ? answer(p) : undefined;
            return a ? [[p.name, a] as const] : [];
          }),
        );
    const ready = (s: InferenceModelStatus) => conditions(s)?.[0];
    const twoStages = { model: { numLayers: 4, servedName: "q2" }, parallelism: { pipeline: 2 } };

    it("is Ready when an entry worker of a ready replica serves the model's served name", () => {
      const s = status(
        twoStages,
        (p) => observed(p),
        undefined,
        T0,
        64,
        undefined,
        answering(() => ({ names: ["q2"] })),
      );
      assert.equal(ready(s), "Ready=True/ReplicasReady: 1/1 replicas ready");
      assert.equal(s.servedName, "q2");
    });

    it("is not Ready while the workers serve another name (the folder's), and says both names", () => {
      const s = status(
        twoStages,
        (p) => observed(p),
        undefined,
        T0,
        64,
        undefined,
        answering(() => ({ names: ["qwen"] })),
      );
      assert.equal(
        ready(s),
        'Ready=False/ServedNameMismatch: workers serve "qwen", the model is served as "q2"',
      );
      assert.equal(s.readyReplicas, 1, "the pods are Ready; the model is not");
      // The default served name is the model's own, never the folder's.
      const byName = status(
        { replicas: 1 },
        (p) => observed(p),
        undefined,
        T0,
        64,
        undefined,
        answering(() => ({ names: ["tiny-llama"] })),
      );
      assert.equal(
        ready(byName),
        'Ready=False/ServedNameMismatch: workers serve "tiny-llama", the model is served as "tiny"',
      );
    });

    it("is Ready when one of the replicas serves it (the router sends requests only there)", () => {
      const s = status(
        { replicas: 2 },
        (p) => observed(p),
        undefined,
        T0,
        64,
        undefined,
        answering((p) => ({ names: p.replica === 0 ? ["old"] : ["tiny"] })),
      );
      assert.equal(ready(s), "Ready=True/ReplicasReady: 2/2 replicas ready");
    });

    it("is not Ready while no ready worker could say which model it serves", () => {
      const unreachable = status(
        { replicas: 1 },
        (p) => observed(p),
        undefined,
        T0,
        64,
        undefined,
        answering((p) => ({ error: `${p.name}: 14 UNAVAILABLE: connection refused` })),
      );
      assert.match(
        ready(unreachable) ?? "",
        /^Ready=False\/ServedNameUnknown: cannot ask the workers which model they serve \(ListModels\): tiny-both-0-.*UNAVAILABLE.* --no-served-name-check\)$/,
      );
      const unasked = status(
        { replicas: 1 },
        (p) => observed(p),
        undefined,
        T0,
        64,
        undefined,
        answering(() => undefined),
      );
      assert.equal(
        ready(unasked),
        "Ready=False/ServedNameUnknown: waiting for the workers to say which model they serve",
      );
    });

    it("checks the prefill workers too in disaggregated mode", () => {
      const spec = {
        serving: { mode: "disaggregated" as const },
        kvTransfer: { redis: { address: "redis:6379" } },
      };
      const s = status(
        spec,
        (p) => observed(p),
        undefined,
        T0,
        64,
        undefined,
        answering((p) => ({ names: p.role === "prefill" ? ["tiny-llama"] : ["tiny"] })),
      );
      assert.equal(
        ready(s),
        'Ready=False/ServedNameMismatch: prefill workers serve "tiny-llama", the model is served as "tiny"',
      );
    });
  });

  it("counts a replica Ready only when every pod of its gang is", () => {
    const s = status({ replicas: 2, parallelism: { tensor: 2 } }, (p) =>
      observed(p).map((pod, i) => (i === 3 ? { ...pod, ready: false } : pod)),
    );
    assert.deepEqual([s.replicas, s.readyReplicas], [2, 1]);
    assert.equal(conditions(s)?.[1], "Progressing=True/WaitingForPods: 1 pods not Ready yet");
  });

  it("reports a rollout in progress and keeps serving from the old groups", () => {
    const old = planPlacement({
      model: MODEL_REF,
      spec: modelSpec({ replicas: 2 }),
      pools: pools({ default: {} }),
    });
    const s = status({ replicas: 2, engine: { blockSize: 8 } }, (p) => [
      ...observed(old),
      ...observed(p, {}, [0]),
    ]);
    assert.deepEqual([s.replicas, s.readyReplicas, s.updatedReplicas], [2, 2, 1]);
    assert.equal(conditions(s)?.[1], "Progressing=True/RollingOut: 1 of 2 replicas updated");
    assert.equal(s.shards?.length, 3);
  });

  it("is Degraded when the pool cannot hold every replica", () => {
    const s = status({ replicas: 3 }, (p) => observed(p), undefined, T0, 2);
    assert.deepEqual(conditions(s), [
      "Ready=True/ReplicasReady: 2/3 replicas ready",
      "Progressing=False/Converged: every pod runs the current revision",
      'Degraded=True/InsufficientCapacity: WorkerPool "default" has room for 2 of 3 both replicas',
    ]);
  });

  it("counts prefill replicas separately in disaggregated mode", () => {
    const spec = {
      replicas: 2,
      serving: { mode: "disaggregated" as const, prefillReplicas: 1 },
      kvTransfer: { redis: { address: "r:6379" } },
    };
    const s = status(spec, (p) => observed(p).filter((pod) => pod.role === "decode"));
    assert.deepEqual([s.replicas, s.readyReplicas, s.prefillReplicas, s.readyPrefillReplicas], [2, 2, 0, 0]);
    assert.equal(conditions(s)?.[0], "Ready=False/NoPrefillReplicaReady: 2/2 replicas ready, 0/1 prefill");
  });

  it("keeps a condition's transition time while its status holds", () => {
    const first = status({ replicas: 1 }, () => [], undefined, T0);
    const again = status({ replicas: 1 }, () => [], first, T1);
    assert.deepEqual(again, first);
    const ready = status({ replicas: 1 }, (p) => observed(p), first, T1);
    assert.equal(ready.conditions?.[0]?.lastTransitionTime, T1);
    assert.equal(ready.conditions?.[2]?.lastTransitionTime, T0);
  });
});
