import assert from "node:assert/strict";
import type { KubeObject } from "../../../services/kube/kube-object.ts";
import { isPodReady } from "../objects/pod-readiness.ts";
import { DEPLOYMENTS, REPLICASETS } from "../objects/refs.ts";
import type { Deployment, ReplicaSet } from "../objects/workload-types.ts";
import { HASH_LABEL, REVISION } from "./deployment-controller.ts";
import { controllerCluster } from "./test-controllers.ts";

const deployment = (
  replicas: number,
  image: string,
  strategy: object = { type: "RollingUpdate", rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } },
): KubeObject => ({
  apiVersion: "apps/v1",
  kind: "Deployment",
  metadata: { name: "web" },
  spec: {
    replicas,
    strategy,
    progressDeadlineSeconds: 60,
    selector: { matchLabels: { app: "web" } },
    template: {
      metadata: { labels: { app: "web" } },
      spec: { containers: [{ name: "c", image, command: ["x"] }] },
    },
  },
});

describe("deployment-controller", () => {
  function setup() {
    const cluster = controllerCluster();
    const get = () => cluster.api.get(DEPLOYMENTS, "default", "web") as Deployment;
    const replicaSets = () =>
      (cluster.api.list(REPLICASETS, { namespace: "default" }).items as ReplicaSet[]).sort(
        (a, b) => Number(a.metadata.annotations?.[REVISION]) - Number(b.metadata.annotations?.[REVISION]),
      );
    /** Plays kubelet until the rollout settles; returns the most pods and fewest ready pods seen. */
    const rollOut = async () => {
      let most = 0;
      let fewestReady = Number.POSITIVE_INFINITY;
      for (let round = 0; round < 30; round++) {
        await cluster.settle();
        const pods = cluster.pods();
        most = Math.max(most, pods.length);
        fewestReady = Math.min(fewestReady, pods.filter(isPodReady).length);
        cluster.runPods();
        cluster.reapPods();
      }
      await cluster.settle();
      return { most, fewestReady };
    };
    const update = (change: (d: Deployment) => void) => {
      const d = get();
      change(d);
      cluster.api.update(DEPLOYMENTS, "default", "web", d);
    };
    return { ...cluster, get, replicaSets, rollOut, update };
  }

  it("creates a ReplicaSet named by its pod-template-hash and reports the rollout complete", async () => {
    const { api, get, replicaSets, rollOut } = setup();
    api.create(DEPLOYMENTS, "default", deployment(3, "v1"));
    await rollOut();
    const [rs] = replicaSets();
    assert.ok(rs);
    const hash = rs.metadata.labels?.[HASH_LABEL] ?? "";
    assert.equal(rs.metadata.name, `web-${hash}`);
    assert.equal(rs.spec.template.metadata?.labels?.[HASH_LABEL], hash);
    assert.deepEqual(rs.spec.selector.matchLabels, { app: "web", [HASH_LABEL]: hash });
    assert.equal(rs.metadata.annotations?.[REVISION], "1");
    const d = get();
    assert.equal(d.metadata.annotations?.[REVISION], "1");
    assert.deepEqual(
      [
        d.status?.observedGeneration,
        d.status?.replicas,
        d.status?.updatedReplicas,
        d.status?.readyReplicas,
        d.status?.availableReplicas,
      ],
      [1, 3, 3, 3, 3],
    );
    const conditions = Object.fromEntries(
      (d.status?.conditions ?? []).map((c) => [c.type, `${c.status}/${c.reason}`]),
    );
    assert.deepEqual(conditions, {
      Available: "True/MinimumReplicasAvailable",
      Progressing: "True/NewReplicaSetAvailable",
    });
  });

  it("rolls a new template out within maxSurge=1 and maxUnavailable=0", async () => {
    const { api, get, replicaSets, rollOut, update } = setup();
    api.create(DEPLOYMENTS, "default", deployment(3, "v1"));
    await rollOut();
    update((d) => {
      const container = d.spec.template.spec.containers[0];
      if (container) container.image = "v2";
    });
    const { most, fewestReady } = await rollOut();
    assert.ok(most <= 4, `at most replicas + maxSurge pods, saw ${most}`);
    assert.ok(fewestReady >= 3, `never fewer than replicas - maxUnavailable ready, saw ${fewestReady}`);
    const [old, fresh] = replicaSets();
    assert.equal(old?.spec.replicas, 0);
    assert.equal(fresh?.spec.replicas, 3);
    assert.equal(fresh?.metadata.annotations?.[REVISION], "2");
    const d = get();
    assert.deepEqual(
      [d.status?.observedGeneration, d.status?.updatedReplicas, d.status?.replicas],
      [2, 3, 3],
    );
    assert.equal(d.metadata.annotations?.[REVISION], "2");
  });

  it("goes back to an earlier ReplicaSet on rollback, which takes the next revision", async () => {
    const { api, replicaSets, rollOut, update } = setup();
    api.create(DEPLOYMENTS, "default", deployment(1, "v1"));
    await rollOut();
    const setImage = (image: string) =>
      update((d) => {
        const container = d.spec.template.spec.containers[0];
        if (container) container.image = image;
      });
    setImage("v2");
    await rollOut();
    setImage("v1");
    await rollOut();
    const rss = replicaSets();
    assert.equal(rss.length, 2);
    assert.deepEqual(
      rss.map((rs) => [
        rs.spec.template.spec.containers[0]?.image,
        rs.metadata.annotations?.[REVISION],
        rs.spec.replicas,
      ]),
      [
        ["v2", "2", 0],
        ["v1", "3", 1],
      ],
    );
  });

  it("scales with spec.replicas", async () => {
    const { api, get, pods, rollOut, update } = setup();
    api.create(DEPLOYMENTS, "default", deployment(1, "v1"));
    await rollOut();
    update((d) => (d.spec.replicas = 4));
    await rollOut();
    assert.equal(pods().length, 4);
    update((d) => (d.spec.replicas = 2));
    await rollOut();
    assert.equal(pods().length, 2);
    assert.equal(get().status?.availableReplicas, 2);
  });

  it("recreates: every old pod goes before a new one starts", async () => {
    const { api, replicaSets, rollOut, update } = setup();
    api.create(DEPLOYMENTS, "default", deployment(2, "v1", { type: "Recreate" }));
    await rollOut();
    update((d) => {
      const container = d.spec.template.spec.containers[0];
      if (container) container.image = "v2";
    });
    const { fewestReady } = await rollOut();
    assert.equal(fewestReady, 0);
    assert.deepEqual(
      replicaSets().map((rs) => rs.spec.replicas),
      [0, 2],
    );
  });

  it("reports ProgressDeadlineExceeded when pods never become ready", async () => {
    const { api, clock, get, settle, runPods } = setup();
    api.create(DEPLOYMENTS, "default", deployment(1, "v1"));
    await settle();
    runPods(() => false);
    await settle();
    await clock.advance(62_000);
    await settle();
    const progressing = get().status?.conditions?.find((c) => c.type === "Progressing");
    assert.equal(progressing?.status, "False");
    assert.equal(progressing?.reason, "ProgressDeadlineExceeded");
  });
});
