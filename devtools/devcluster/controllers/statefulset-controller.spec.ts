import assert from "node:assert/strict";
import type { KubeObject } from "../../../services/kube/kube-object.ts";
import { STATEFULSETS } from "../objects/refs.ts";
import type { StatefulSet } from "../objects/workload-types.ts";
import { POD_INDEX_LABEL, REVISION_LABEL } from "./statefulset-controller.ts";
import { controllerCluster } from "./test-controllers.ts";

const statefulSet = (replicas: number, image: string): KubeObject => ({
  apiVersion: "apps/v1",
  kind: "StatefulSet",
  metadata: { name: "db" },
  spec: {
    replicas,
    serviceName: "db",
    selector: { matchLabels: { app: "db" } },
    updateStrategy: { type: "RollingUpdate", rollingUpdate: { partition: 0 } },
    volumeClaimTemplates: [{ metadata: { name: "data" } }],
    template: {
      metadata: { labels: { app: "db" } },
      spec: { containers: [{ name: "c", image, command: ["x"] }] },
    },
  },
});

describe("statefulset-controller", () => {
  function setup() {
    const cluster = controllerCluster();
    const get = () => cluster.api.get(STATEFULSETS, "default", "db") as StatefulSet;
    const names = () =>
      cluster
        .pods()
        .map((p) => p.metadata.name)
        .sort();
    const step = async () => {
      await cluster.settle();
      cluster.runPods();
      cluster.reapPods();
      await cluster.settle();
    };
    return { ...cluster, get, names, step };
  }

  it("creates ordinal pods one at a time, each once the previous is ready", async () => {
    const { api, pods, names, step, settle } = setup();
    api.create(STATEFULSETS, "default", statefulSet(3, "v1"));
    await settle();
    assert.deepEqual(names(), ["db-0"]);
    await step();
    assert.deepEqual(names(), ["db-0", "db-1"]);
    await step();
    await step();
    assert.deepEqual(names(), ["db-0", "db-1", "db-2"]);
    const pod = pods().find((p) => p.metadata.name === "db-1");
    assert.equal(pod?.spec.hostname, "db-1");
    assert.equal(pod?.spec.subdomain, "db");
    assert.equal(pod?.metadata.labels?.[POD_INDEX_LABEL], "1");
    assert.deepEqual(pod?.spec.volumes, [
      { name: "data", persistentVolumeClaim: { claimName: "data-db-1" } },
    ]);
  });

  it("rolls a new template out from the highest ordinal and then reports one revision", async () => {
    const { api, get, pods, step } = setup();
    api.create(STATEFULSETS, "default", statefulSet(2, "v1"));
    for (let i = 0; i < 3; i++) await step();
    const before = get().status;
    assert.equal(before?.readyReplicas, 2);
    assert.equal(before?.currentRevision, before?.updateRevision);
    const sts = get();
    const container = sts.spec.template.spec.containers[0];
    if (container) container.image = "v2";
    api.update(STATEFULSETS, "default", "db", sts);
    for (let i = 0; i < 8; i++) await step();
    const after = get().status;
    assert.notEqual(after?.updateRevision, before?.updateRevision);
    assert.equal(after?.currentRevision, after?.updateRevision);
    assert.deepEqual(
      [after?.replicas, after?.readyReplicas, after?.updatedReplicas, after?.currentReplicas],
      [2, 2, 2, 2],
    );
    assert.ok(pods().every((p) => p.metadata.labels?.[REVISION_LABEL] === after?.updateRevision));
    assert.ok(pods().every((p) => p.spec.containers[0]?.image === "v2"));
  });

  it("scales down from the highest ordinal", async () => {
    const { api, get, names, step } = setup();
    api.create(STATEFULSETS, "default", statefulSet(3, "v1"));
    for (let i = 0; i < 4; i++) await step();
    const sts = get();
    sts.spec.replicas = 1;
    api.update(STATEFULSETS, "default", "db", sts);
    for (let i = 0; i < 3; i++) await step();
    assert.deepEqual(names(), ["db-0"]);
    assert.equal(get().status?.replicas, 1);
  });
});
