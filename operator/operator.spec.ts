// The whole control loop against the dev cluster over HTTPS (a simulated kubelet makes pods Ready).
import assert from "node:assert/strict";
import { LABELS } from "../services/api/group.ts";
import type { KubeObject } from "../services/kube/kube-object.ts";
import { DEPLOYMENTS, SECRETS, SERVICES } from "../services/kube/resources.ts";
import { MODELS_CONTROLLER } from "./operator.ts";
import { observePod } from "./placement/pod-state.ts";
import { FakeRedis } from "./testing/fake-redis.ts";
import { inferenceModel, workerPool } from "./testing/fixtures.ts";
import { condition, OperatorFixture } from "./testing/operator-fixture.ts";
import { restrictedViolations } from "./testing/pod-security.ts";
import { waitFor } from "./testing/pod-simulator.ts";

const names = (pods: KubeObject[]) => pods.map((p) => p.metadata.name ?? "").sort();
const podsWith = (pods: KubeObject[], label: string, value: string) =>
  pods.filter((p) => p.metadata.labels?.[label] === value);

describe("operator (dev cluster, simulated kubelet)", function () {
  this.timeout(30_000);
  let f: OperatorFixture;
  before(async () => {
    f = await OperatorFixture.start();
    f.startOperator();
  });
  after(async () => {
    await f.close();
    assert.deepEqual([...f.permissions.violations], [], "calls the operator's Role does not allow");
  });

  it("places a model's pods, registers its shards and reports Ready", async () => {
    const ns = f.namespace();
    await f.apply(ns, workerPool("default"));
    await f.apply(ns, inferenceModel("tiny"));
    const model = await f.waitForModel(ns, "tiny", "Ready", (m) => condition(m, "Ready")?.status === "True");
    assert.deepEqual(model.metadata.finalizers, ["serving.tessera.dev/cleanup"]);
    assert.equal(model.status?.readyReplicas, 1);
    const [shard] = model.status?.shards ?? [];
    assert.match(shard?.endpoint ?? "", /^127\.0\.\d+\.\d+:50051$/);
    assert.deepEqual([shard?.role, shard?.entry, shard?.ready], ["both", true, true]);
    const pods = await f.pods(ns);
    assert.equal(pods.length, 1);
    assert.deepEqual(restrictedViolations(pods[0]!), []);
    assert.equal(await f.client.get(SERVICES, ns, "tiny-workers"), undefined, "a one-pod group has no peers");
    await f.settled();
    const progressing = condition((await f.model(ns, "tiny"))!, "Progressing");
    assert.equal(progressing?.reason, "Converged");
  });

  it("runs the model's router and is Ready only once the router is available", async () => {
    const ns = f.namespace();
    await f.apply(ns, workerPool("default", { command: ["node", "services/cli/main.ts"] }));
    f.kubelet.autoReady = false;
    try {
      await f.apply(ns, inferenceModel("rt", { routing: { strategy: "least-load" } }));
      const deployment = await waitFor("router Deployment", () => f.client.get(DEPLOYMENTS, ns, "rt-router"));
      for (const pod of await waitFor(
        "worker pod",
        async () => (await f.pods(ns)).length === 1 && f.pods(ns),
      ))
        f.kubelet.markReady(ns, pod.metadata.name!);
      const waiting = await f.waitForModel(ns, "rt", "replica ready", (m) => m.status?.readyReplicas === 1);
      assert.equal(waiting.status?.routerEndpoint, `rt-router.${ns}.svc:50050`);
      assert.equal(condition(waiting, "Ready")?.reason, "RouterNotAvailable");
      const args = (
        (deployment["spec"] as { template: { spec: { containers: { args: string[] }[] } } }).template.spec
          .containers[0]?.args ?? []
      ).join(" ");
      assert.match(args, /^router --config-json .*"scorers":\[\{"type":"load","weight":1\}\]/);
      for (const [ref, name] of [
        [SERVICES, "rt-router"],
        [{ group: "", version: "v1", resource: "serviceaccounts" }, "rt-router"],
        [{ group: "rbac.authorization.k8s.io", version: "v1", resource: "roles" }, "rt-router"],
        [{ group: "rbac.authorization.k8s.io", version: "v1", resource: "rolebindings" }, "rt-router"],
      ] as const)
        assert.ok(await f.client.get(ref, ns, name), `${ref.resource}/${name}`);
      f.kubelet.setDeploymentAvailable(ns, "rt-router", 1);
      await f.waitForModel(ns, "rt", "Ready", (m) => condition(m, "Ready")?.status === "True");
      const before = deployment.metadata.resourceVersion;
      await f.apply(ns, inferenceModel("rt", { routing: { strategy: "round-robin" } }));
      const rolled = await waitFor("router rolled", async () => {
        const d = await f.client.get(DEPLOYMENTS, ns, "rt-router");
        return JSON.stringify(d?.["spec"]).includes("round-robin") && d;
      });
      assert.notEqual(rolled.metadata.resourceVersion, before);
    } finally {
      f.kubelet.autoReady = true;
    }
  });

  it("is not Ready while its workers serve another name; a new servedName rolls the pods, which serve it", async () => {
    const ns = f.namespace();
    await f.apply(ns, workerPool("default"));
    f.workerModels.serving = ["qwen"];
    try {
      await f.apply(ns, inferenceModel("q2", { model: { path: "/models/qwen" } }));
      const wrong = await f.waitForModel(
        ns,
        "q2",
        "ServedNameMismatch",
        (m) => condition(m, "Ready")?.reason === "ServedNameMismatch",
      );
      assert.equal(condition(wrong, "Ready")?.status, "False");
      assert.equal(condition(wrong, "Ready")?.message, 'workers serve "qwen", the model is served as "q2"');
      assert.equal(wrong.status?.readyReplicas, 1, "the pods are Ready; the model is not");
      assert.equal(wrong.status?.servedName, "q2");
    } finally {
      f.workerModels.serving = undefined;
    }
    const before = names(await f.pods(ns)).filter((n) => n.startsWith("q2-both-"));
    await f.apply(ns, inferenceModel("q2", { model: { path: "/models/qwen", servedName: "Qwen/Qwen2.5" } }));
    const renamed = await f.waitForModel(ns, "q2", "Ready", (m) => condition(m, "Ready")?.status === "True");
    assert.equal(renamed.status?.servedName, "Qwen/Qwen2.5");
    const after = names(await f.pods(ns)).filter((n) => n.startsWith("q2-both-"));
    assert.equal(after.length, 1);
    assert.ok(!before.includes(after[0]!), `a new pod (${after[0]}) replaced ${before.join(", ")}`);
    const router = JSON.stringify((await f.client.get(DEPLOYMENTS, ns, "q2-router"))?.["spec"]);
    assert.match(router, /\\"models\\":\[\{\\"id\\":\\"Qwen\/Qwen2\.5\\"/, "the router serves the new name");
    await f.settled();
  });

  it("places a 2 x 2 group and counts it Ready only when all four pods are", async () => {
    const ns = f.namespace();
    f.kubelet.autoReady = false;
    try {
      await f.apply(ns, workerPool("default"));
      await f.apply(
        ns,
        inferenceModel("pp", { model: { numLayers: 4 }, parallelism: { tensor: 2, pipeline: 2 } }),
      );
      const pods = await waitFor("4 pods", async () =>
        (await f.pods(ns)).length === 4 ? f.pods(ns) : undefined,
      );
      const service = await f.client.get(SERVICES, ns, "pp-workers");
      assert.equal((service?.["spec"] as { clusterIP?: string } | undefined)?.clusterIP, "None");
      for (const pod of pods.slice(0, 3)) f.kubelet.markReady(ns, pod.metadata.name!);
      await f.waitForModel(
        ns,
        "pp",
        "3 shards ready",
        (m) => m.status?.shards?.filter((s) => s.ready).length === 3,
      );
      assert.equal((await f.model(ns, "pp"))?.status?.readyReplicas, 0);
      f.kubelet.markReady(ns, pods[3]!.metadata.name!);
      await f.waitForModel(ns, "pp", "replica ready", (m) => m.status?.readyReplicas === 1);
    } finally {
      f.kubelet.autoReady = true;
    }
  });

  it("scales 1 -> 3 -> 1 replicas", async () => {
    const ns = f.namespace();
    await f.apply(ns, workerPool("default"));
    await f.apply(ns, inferenceModel("s", { replicas: 1 }));
    await f.waitForModel(ns, "s", "1 ready", (m) => m.status?.readyReplicas === 1);
    await f.apply(ns, inferenceModel("s", { replicas: 3 }));
    const three = await f.waitForModel(ns, "s", "3 ready", (m) => m.status?.readyReplicas === 3);
    assert.deepEqual(
      three.status?.shards?.map((s) => s.replica),
      [0, 1, 2],
    );
    await f.apply(ns, inferenceModel("s", { replicas: 1 }));
    await waitFor("pods of replicas 1, 2 gone", async () => (await f.pods(ns)).length === 1);
    await f.waitForModel(
      ns,
      "s",
      "1 replica",
      (m) => m.status?.replicas === 1 && m.status.shards?.length === 1,
    );
  });

  it("rolls an engine change out one replica at a time, never dropping below the ready count", async () => {
    const ns = f.namespace();
    await f.apply(ns, workerPool("default"));
    await f.apply(ns, inferenceModel("r", { replicas: 3 }));
    const before = await f.waitForModel(ns, "r", "3 ready", (m) => m.status?.readyReplicas === 3);
    const oldRevision = before.status?.revision ?? "";
    f.kubelet.autoReady = false;
    try {
      await f.apply(ns, inferenceModel("r", { replicas: 3, engine: { blockSize: 32 } }));
      for (let step = 0; step < 3; step++) {
        const isFresh = (p: KubeObject) =>
          p.metadata.labels?.[LABELS.revision] !== oldRevision && !observePod(p)?.ready;
        const pods = await waitFor(`new pod ${step}`, async () => {
          const all = await f.pods(ns);
          return all.some(isFresh) ? all : undefined;
        });
        const fresh = pods.filter(isFresh);
        assert.equal(fresh.length, 1, "one replica at a time");
        assert.equal(pods.length, 4, "surge: the old group still serves beside the new one");
        const replica = fresh[0]!.metadata.labels?.[LABELS.replica];
        f.kubelet.markReady(ns, fresh[0]!.metadata.name!);
        // The operator may surge the next replica in the same breath, so the pod count need not pass
        // through 3: wait for this replica's old group itself to go.
        const isOldOfReplica = (p: KubeObject) =>
          p.metadata.labels?.[LABELS.revision] === oldRevision &&
          p.metadata.labels?.[LABELS.replica] === replica;
        await waitFor(
          "old group of the replica deleted",
          async () => !(await f.pods(ns)).some(isOldOfReplica),
        );
        assert.equal((await f.model(ns, "r"))?.status?.readyReplicas, 3);
      }
      const after = await f.waitForModel(
        ns,
        "r",
        "rolled out",
        (m) => m.status?.updatedReplicas === 3 && condition(m, "Progressing")?.status === "False",
      );
      assert.notEqual(after.status?.revision, oldRevision);
    } finally {
      f.kubelet.autoReady = true;
    }
  });

  it("reports a missing pool as Degraded and places the pods once the pool exists", async () => {
    const ns = f.namespace();
    await f.apply(ns, inferenceModel("p", { pools: { default: "gpu" } }));
    const degraded = await f.waitForModel(
      ns,
      "p",
      "Degraded",
      (m) => condition(m, "Degraded")?.status === "True",
    );
    assert.equal(condition(degraded, "Degraded")?.reason, "PoolNotFound");
    await f.apply(ns, workerPool("gpu", { resources: { requests: { "nvidia.com/gpu": 1 } } }));
    await f.waitForModel(
      ns,
      "p",
      "Ready",
      (m) => condition(m, "Ready")?.status === "True" && condition(m, "Degraded")?.status === "False",
    );
    const pool = await waitFor("pool status", async () => {
      const p = await f.client.get<KubeObject & { status?: { gpusInUse?: number; podsInUse?: number } }>(
        { group: "serving.tessera.dev", version: "v1alpha1", resource: "workerpools" },
        ns,
        "gpu",
      );
      return p?.status?.gpusInUse === 1 ? p : undefined;
    });
    assert.equal(pool.status?.podsInUse, 1);
  });

  it("restarts the whole group of a failed pod", async () => {
    const ns = f.namespace();
    await f.apply(ns, workerPool("default"));
    await f.apply(ns, inferenceModel("g", { parallelism: { tensor: 2 } }));
    await f.waitForModel(ns, "g", "Ready", (m) => m.status?.readyReplicas === 1);
    const [first] = await f.pods(ns);
    const uids = new Set((await f.pods(ns)).map((p) => p.metadata.uid));
    f.kubelet.markFailed(ns, first!.metadata.name!);
    await waitFor("both pods recreated and ready", async () => {
      const pods = await f.pods(ns);
      return (
        pods.length === 2 &&
        pods.every((p) => !uids.has(p.metadata.uid)) &&
        (await f.model(ns, "g"))?.status?.readyReplicas === 1
      );
    });
  });

  it("cleans up on delete: pods gone, KV keys deleted, then the model", async () => {
    const ns = f.namespace();
    const redis = new FakeRedis();
    redis.password = "pw";
    const address = await redis.start();
    try {
      await f.apply(ns, workerPool("default"));
      await f.client.create(SECRETS, ns, {
        apiVersion: "v1",
        kind: "Secret",
        metadata: { name: "redis" },
        stringData: { password: "pw" },
      });
      const spec = {
        serving: { mode: "disaggregated" as const },
        kvTransfer: { redis: { address, passwordSecret: { name: "redis" } } },
      };
      await f.apply(ns, inferenceModel("d", spec));
      await f.waitForModel(ns, "d", "Ready", (m) => condition(m, "Ready")?.status === "True");
      redis.db(0).set(`tessera:kv:${ns}:d:tiny@rev:0-2:abc`, "kv");
      redis.db(0).set(`tessera:kv:${ns}:other:tiny@rev:0-2:abc`, "kv");
      assert.equal(podsWith(await f.pods(ns), LABELS.role, "prefill").length, 1);
      await f.client.delete(
        { group: "serving.tessera.dev", version: "v1alpha1", resource: "inferencemodels" },
        ns,
        "d",
      );
      await waitFor("model gone", async () => (await f.model(ns, "d")) === undefined);
      assert.deepEqual(names(await f.pods(ns)), []);
      assert.deepEqual([...redis.db(0).keys()], [`tessera:kv:${ns}:other:tiny@rev:0-2:abc`]);
    } finally {
      await redis.close();
    }
  });

  it("stops reconciling once converged (no hot loop, no fight over fields)", async () => {
    const ns = f.namespace();
    await f.apply(ns, workerPool("default"));
    await f.apply(ns, inferenceModel("quiet", { replicas: 2 }));
    await f.waitForModel(ns, "quiet", "Ready", (m) => m.status?.readyReplicas === 2);
    await f.settled();
    const count = f.operator!.metrics.reconciles(MODELS_CONTROLLER);
    const version = (await f.model(ns, "quiet"))?.metadata.resourceVersion;
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    // The count covers every model of the suite's operator, and one more reconcile was seen once in a
    // full CI run (104 for 103; cause not found, perhaps an earlier spec's deleted model). A hot loop
    // would reconcile dozens of times in this second, and the model must not be written again.
    const extra = f.operator!.metrics.reconciles(MODELS_CONTROLLER) - count;
    assert.ok(extra <= 1, `${extra} reconciles after converging`);
    assert.equal((await f.model(ns, "quiet"))?.metadata.resourceVersion, version);
  });
});
