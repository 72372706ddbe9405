import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { createLogger } from "../../../services/kernel/log.ts";
import type { KubeObject } from "../../../services/kube/kube-object.ts";
import { testCluster } from "../apiserver/cluster/test-cluster.ts";
import type { Container, Pod } from "../objects/pod-types.ts";
import { CONFIGMAPS, NODES, PODS } from "../objects/refs.ts";
import { FakeLauncher, flush } from "./fake-launcher.ts";
import { Kubelet } from "./kubelet.ts";

const NODE = "node-a";

const podObject = (name: string, containers: Container[], extra: Partial<Pod["spec"]> = {}): KubeObject => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name },
  spec: { nodeName: NODE, containers, ...extra },
});
const sleeper = (name: string, extra: Partial<Container> = {}): Container => ({
  name,
  image: "none",
  command: ["node", "-e", name],
  ...extra,
});

describe("kubelet", () => {
  let rootDir: string;
  beforeEach(() => {
    rootDir = mkdtempSync(path.join(os.tmpdir(), "tessera-kubelet-spec-"));
  });
  afterEach(() => rmSync(rootDir, { recursive: true, force: true }));

  function setup() {
    const cluster = testCluster({ gracefulPodDeletion: true, controllers: true });
    const fake = new FakeLauncher();
    const kubelet = new Kubelet(
      {
        nodeName: NODE,
        rootDir,
        podCidr: "127.77.0.0/16",
        capacity: { cpu: "4", memory: "8Gi", "nvidia.com/gpu": 2 },
        inheritEnv: [],
        podEnv: { KUBECONFIG: "/tmp/kubeconfig" },
        clusterId: "c1",
      },
      {
        api: cluster.api,
        clock: cluster.clock,
        launcher: fake.launcher,
        checker: async () => ({ ok: true, message: "" }),
        log: createLogger("kubelet-spec", "silent"),
      },
    );
    kubelet.start();
    const settle = async () => {
      for (let i = 0; i < 3; i++) {
        await flush();
        await kubelet.idle();
        await cluster.settle();
      }
    };
    const get = (name: string) => cluster.api.get(PODS, "default", name) as Pod;
    return { ...cluster, fake, kubelet, settle, get };
  }

  it("registers its node with the declared capacity", () => {
    const { api, kubelet } = setup();
    const node = api.get(NODES, "", NODE);
    const status = node["status"] as {
      allocatable: Record<string, string>;
      conditions: { type: string; status: string }[];
    };
    assert.deepEqual(status.allocatable, { cpu: "4", memory: "8Gi", "nvidia.com/gpu": "2", pods: "110" });
    assert.equal(status.conditions.find((c) => c.type === "Ready")?.status, "True");
    void kubelet.stop();
  });

  it("runs a pod's containers with a loopback pod IP and their env, and reports it Running and Ready", async () => {
    const { api, fake, kubelet, settle, get } = setup();
    api.create(CONFIGMAPS, "default", {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "cfg" },
      data: { mode: "fast" },
    });
    api.create(
      PODS,
      "default",
      podObject("web", [
        sleeper("server", {
          env: [
            { name: "POD_IP", valueFrom: { fieldRef: { fieldPath: "status.podIP" } } },
            { name: "MODE", valueFrom: { configMapKeyRef: { name: "cfg", key: "mode" } } },
          ],
          resources: { limits: { "nvidia.com/gpu": "1" } },
        }),
      ]),
    );
    await settle();
    const pod = get("web");
    assert.equal(pod.status?.phase, "Running");
    assert.match(pod.status?.podIP ?? "", /^127\.77\.\d+\.\d+$/);
    assert.equal(pod.status?.hostIP, "127.0.0.1");
    assert.deepEqual(pod.status?.conditions?.map((c) => `${c.type}=${c.status}`).sort(), [
      "ContainersReady=True",
      "Initialized=True",
      "PodReadyToStartContainers=True",
      "PodScheduled=True",
      "Ready=True",
    ]);
    const [status] = pod.status?.containerStatuses ?? [];
    assert.equal(status?.ready, true);
    assert.equal(status?.restartCount, 0);
    const env = fake.latest("server")?.spec.env ?? {};
    assert.equal(env["POD_IP"], pod.status?.podIP);
    assert.equal(env["MODE"], "fast");
    assert.equal(env["KUBECONFIG"], "/tmp/kubeconfig");
    assert.equal(env["TESSERA_DEV_CLUSTER"], "c1");
    assert.equal(env["HOSTNAME"], "web");
    assert.equal(env["CUDA_VISIBLE_DEVICES"], "0");
    assert.deepEqual(kubelet.pids, [fake.latest("server")?.pid]);
    await kubelet.stop({ graceSeconds: 0 });
  });

  async function readLogs(
    kubelet: Kubelet,
    name: string,
    options: { previous?: boolean; container?: string } = {},
  ) {
    const chunks = await kubelet.logs({
      namespace: "default",
      name,
      follow: false,
      previous: options.previous ?? false,
      timestamps: false,
      ...(options.container ? { container: options.container } : {}),
      signal: new AbortController().signal,
    });
    let text = "";
    for await (const chunk of chunks) text += String(chunk);
    return text;
  }

  it("counts restarts of a crashed container and serves the current and previous logs", async () => {
    const { api, clock, fake, kubelet, settle, get } = setup();
    api.create(PODS, "default", podObject("crashy", [sleeper("app")]));
    await settle();
    fake.latest("app")?.print("run 1\n");
    fake.latest("app")?.exit(1);
    await settle();
    await clock.advance(0);
    await settle();
    fake.latest("app")?.print("run 2\n");
    const status = get("crashy").status?.containerStatuses?.[0];
    assert.equal(status?.restartCount, 1);
    assert.equal(status?.lastState.terminated?.exitCode, 1);
    assert.ok(status?.state.running);
    assert.equal(await readLogs(kubelet, "crashy"), "run 2\n");
    assert.equal(await readLogs(kubelet, "crashy", { previous: true }), "run 1\n");
    await kubelet.stop({ graceSeconds: 0 });
  });

  it("asks for a container name when a pod has several", async () => {
    const { api, kubelet, settle } = setup();
    api.create(PODS, "default", podObject("two", [sleeper("a"), sleeper("b")]));
    await settle();
    await assert.rejects(
      readLogs(kubelet, "two"),
      /a container name must be specified for pod two, choose one of: \[a b\]/,
    );
    assert.equal(await readLogs(kubelet, "two", { container: "b" }), "");
    await assert.rejects(
      readLogs(kubelet, "two", { container: "b", previous: true }),
      /previous terminated container "b"/,
    );
    await kubelet.stop({ graceSeconds: 0 });
  });

  it("finishes a deletion: SIGTERM, SIGKILL after the grace period, then removes the pod", async () => {
    const { api, clock, fake, kubelet, settle } = setup();
    api.create(
      PODS,
      "default",
      podObject("stubborn", [sleeper("app")], { terminationGracePeriodSeconds: 5 }),
    );
    await settle();
    const proc = fake.latest("app");
    assert.ok(proc);
    proc.ignoreTerm = true;
    api.delete(PODS, "default", "stubborn");
    await settle();
    assert.deepEqual(proc.signals, ["SIGTERM"]);
    assert.ok(api.get(PODS, "default", "stubborn").metadata.deletionTimestamp);
    await clock.advance(5_000);
    await settle();
    assert.deepEqual(proc.signals, ["SIGTERM", "SIGKILL"]);
    assert.throws(() => api.get(PODS, "default", "stubborn"), /not found/);
    assert.deepEqual(kubelet.pids, []);
    await kubelet.stop();
  });

  it("gives a force-deleted pod's processes at most 2 seconds", async () => {
    const { api, clock, fake, kubelet, settle } = setup();
    api.create(PODS, "default", podObject("forced", [sleeper("app")], { terminationGracePeriodSeconds: 30 }));
    await settle();
    const proc = fake.latest("app");
    assert.ok(proc);
    proc.ignoreTerm = true;
    api.delete(PODS, "default", "forced", { gracePeriodSeconds: 0 });
    await settle();
    assert.deepEqual(proc.signals, ["SIGTERM"]);
    await clock.advance(2_000);
    await settle();
    assert.deepEqual(proc.signals, ["SIGTERM", "SIGKILL"]);
    await kubelet.stop();
  });

  it("runs init containers to completion first, and ends a Never pod as Succeeded or Failed", async () => {
    const { api, fake, kubelet, settle, get } = setup();
    api.create(
      PODS,
      "default",
      podObject("job", [sleeper("main")], { initContainers: [sleeper("setup")], restartPolicy: "Never" }),
    );
    await settle();
    assert.equal(fake.latest("main"), undefined);
    assert.equal(get("job").status?.conditions?.find((c) => c.type === "Initialized")?.status, "False");
    fake.latest("setup")?.exit(0);
    await settle();
    assert.ok(fake.latest("main"));
    assert.equal(get("job").status?.phase, "Running");
    fake.latest("main")?.exit(0);
    await settle();
    assert.equal(get("job").status?.phase, "Succeeded");
    assert.equal(get("job").status?.containerStatuses?.[0]?.state.terminated?.reason, "Completed");
    await kubelet.stop();
  });

  it("leaves pods of other nodes alone, and stops every process when it stops", async () => {
    const { api, fake, kubelet, settle } = setup();
    api.create(PODS, "default", {
      ...podObject("elsewhere", [sleeper("x")]),
      spec: { nodeName: "node-b", containers: [sleeper("x")] },
    });
    api.create(PODS, "default", podObject("here", [sleeper("y")]));
    await settle();
    assert.deepEqual(
      fake.processes.map((p) => p.spec.args.at(-1)),
      ["y"],
    );
    await kubelet.stop({ graceSeconds: 0 });
    assert.deepEqual(fake.running, []);
  });
});
