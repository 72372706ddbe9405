// Operator restarts, leader election and bounded cleanup, against the dev cluster over HTTPS.
import assert from "node:assert/strict";
import { INFERENCE_MODELS, LABELS } from "../services/api/group.ts";
import type { KubeObject } from "../services/kube/kube-object.ts";
import { EVENTS } from "../services/kube/resources.ts";
import { observePod } from "./placement/pod-state.ts";
import { inferenceModel, workerPool } from "./testing/fixtures.ts";
import { condition, OperatorFixture } from "./testing/operator-fixture.ts";
import { waitFor } from "./testing/pod-simulator.ts";

const shardKey = (p: KubeObject) =>
  ["role", "replica", "stage", "rank"].map((k) => p.metadata.labels?.[`serving.tessera.dev/${k}`]).join("/");

describe("operator lifecycle (dev cluster, simulated kubelet)", function () {
  this.timeout(30_000);
  let f: OperatorFixture;
  before(async () => {
    f = await OperatorFixture.start();
  });
  afterEach(() => f.stopOperator());
  after(async () => {
    await f.close();
    assert.deepEqual([...f.permissions.violations], [], "calls the operator's Role does not allow");
  });

  it("converges after a restart in the middle of a rollout, with no duplicate pods", async () => {
    const ns = f.namespace();
    f.startOperator();
    await f.apply(ns, workerPool("default"));
    await f.apply(ns, inferenceModel("m", { replicas: 3, parallelism: { tensor: 2 } }));
    const before = await f.waitForModel(ns, "m", "3 ready", (m) => m.status?.readyReplicas === 3);
    f.kubelet.autoReady = false;
    await f.apply(
      ns,
      inferenceModel("m", { replicas: 3, parallelism: { tensor: 2 }, engine: { maxNumSeqs: 8 } }),
    );
    await waitFor("rollout started", async () => (await f.pods(ns)).length === 8);
    await f.stopOperator();
    f.kubelet.autoReady = true;
    for (const pod of await f.pods(ns))
      if (!observePod(pod)?.ready) f.kubelet.markReady(ns, pod.metadata.name!);
    f.startOperator();
    const after = await f.waitForModel(
      ns,
      "m",
      "rolled out",
      (m) =>
        m.status?.updatedReplicas === 3 &&
        m.status.readyReplicas === 3 &&
        condition(m, "Progressing")?.status === "False",
    );
    assert.notEqual(after.status?.revision, before.status?.revision);
    const pods = await f.pods(ns);
    assert.equal(pods.length, 6);
    assert.equal(new Set(pods.map(shardKey)).size, 6, "each shard exactly once");
    assert.ok(pods.every((p) => p.metadata.labels?.[LABELS.revision] === after.status?.revision));
  });

  it("with the served-name check off (--no-served-name-check), is Ready on pod readiness and asks no worker", async () => {
    const ns = f.namespace();
    f.startOperator({ workerModels: null });
    await f.apply(ns, workerPool("default"));
    const asked = f.workerModels.asked.length;
    await f.apply(ns, inferenceModel("unchecked"));
    const model = await f.waitForModel(
      ns,
      "unchecked",
      "Ready",
      (m) => condition(m, "Ready")?.status === "True",
    );
    assert.equal(condition(model, "Ready")?.reason, "ReplicasReady");
    assert.equal(f.workerModels.asked.length, asked);
  });

  it("acts only as the leader; a standby takes over when the leader stops", async () => {
    const ns = f.namespace();
    const election = { namespace: "default", name: "tessera-operator" };
    const leader = f.startOperator({ leaderElection: { ...election, identity: "a" } });
    await waitFor("a leads", () => leader.isLeader);
    const standby = f.startOperator({ leaderElection: { ...election, identity: "b" } });
    try {
      await f.apply(ns, workerPool("default"));
      await f.apply(ns, inferenceModel("e"));
      await f.waitForModel(ns, "e", "Ready", (m) => m.status?.readyReplicas === 1);
      assert.equal(standby.isLeader, false);
      assert.equal(standby.notReady(), undefined, "a standby is ready (it waits for the lease)");
      await leader.stop();
      await waitFor("b leads", () => standby.isLeader, 15_000);
      await f.apply(ns, inferenceModel("e", { replicas: 2 }));
      await f.waitForModel(ns, "e", "2 ready", (m) => m.status?.readyReplicas === 2);
    } finally {
      await leader.stop();
      await standby.stop();
    }
  });

  it("never wedges deletion: with the KV store unreachable the finalizer goes after the cleanup timeout", async () => {
    const ns = f.namespace();
    const unreachable = { deleteKeys: () => Promise.reject(new Error("connect ECONNREFUSED")) };
    // deletionTimestamp has whole seconds: the timeout must exceed one for the pods to go first.
    f.startOperator({ kvCleaner: unreachable, cleanupTimeoutMs: 1_500 });
    await f.apply(ns, workerPool("default"));
    const spec = {
      serving: { mode: "disaggregated" as const },
      kvTransfer: { redis: { address: "127.0.0.1:1" } },
    };
    await f.apply(ns, inferenceModel("k", spec));
    await f.waitForModel(ns, "k", "Ready", (m) => condition(m, "Ready")?.status === "True");
    await f.client.delete(INFERENCE_MODELS, ns, "k");
    await waitFor("model gone", async () => (await f.model(ns, "k")) === undefined);
    const events = await waitFor("CleanupAbandoned event", async () => {
      const list = await f.client.list<KubeObject & { reason?: string; message?: string }>(EVENTS, {
        namespace: ns,
      });
      return list.items.find((e) => e.reason === "CleanupAbandoned");
    });
    assert.match(events.message ?? "", /ECONNREFUSED/);
  });
});
