// Deployments, StatefulSets and Services on the dev cluster with real kubectl and helm: rollout
// status (kubectl 1.31 and 1.35), pods serving on their IPs, Service -> EndpointSlice, scaling,
// rolling updates and undo, helm install --wait (helm 3 and 4), and deletion that leaves no process.
import assert from "node:assert/strict";
import { mkdirSync } from "node:fs";
import path from "node:path";
import type { Pod } from "../../devtools/devcluster/objects/pod-types.ts";
import type { EndpointSlice } from "../../devtools/devcluster/objects/workload-types.ts";
import { clientBinaries } from "./client-binaries.ts";
import {
  type DevClusterFixture,
  eventually,
  httpGet,
  processesWith,
  runClient,
  startDevClusterFixture,
} from "./kubelet-fixture.ts";
import { serverContainer, toYaml, webDeployment, webService } from "./kubelet-manifests.ts";

describe("deployments on the dev cluster with kubectl and helm (e2e)", function () {
  this.timeout(90_000);
  let f: DevClusterFixture;
  const marker = `deployment-e2e-${process.pid}`;
  const webPods = async () =>
    (JSON.parse(await f.ok("get", "pods", "-l", "app=web", "-o", "json")).items as Pod[]).filter(
      (p) => !p.metadata.deletionTimestamp,
    );
  const answers = async (ip: string) =>
    JSON.parse(await httpGet(ip, 8080)) as { pod: string; version?: string };
  const rolledOut = async (resource = "deployment/web") =>
    assert.match(
      await f.ok("rollout", "status", resource, "--timeout=60s"),
      /successfully rolled out|complete/,
    );

  before(async () => {
    f = await startDevClusterFixture();
  });
  after(async () => {
    await f.close();
    assert.deepEqual(processesWith(marker), [], "no pod process outlives the cluster");
  });

  it("rolls out a Deployment whose pods serve on their IPs, found through the Service's EndpointSlice", async () => {
    await f.ok("apply", "-f", f.file("web.yaml", toYaml(webDeployment(marker, 2, "1"), webService)));
    await rolledOut();
    const v31 = clientBinaries("v31").kubectl;
    const env = { PATH: process.env["PATH"] ?? "", HOME: f.dir, KUBECONFIG: f.kubeconfig };
    const old = await runClient(v31, ["rollout", "status", "deployment/web", "--timeout=30s"], env, f.dir);
    assert.match(old.stdout, /successfully rolled out/, old.stderr);
    assert.match(await f.ok("get", "deployment", "web"), /web\s+2\/2\s+2\s+2\s/);
    const pods = await webPods();
    assert.equal(pods.length, 2);
    for (const pod of pods) assert.equal((await answers(pod.status?.podIP ?? "")).pod, pod.metadata.name);
    assert.equal(processesWith(marker).length, 2);
    const slices = JSON.parse(
      await f.ok("get", "endpointslices", "-l", "kubernetes.io/service-name=web", "-o", "json"),
    ).items as EndpointSlice[];
    assert.equal(slices.length, 1);
    const [slice] = slices;
    assert.deepEqual(slice?.ports, [{ name: "http", port: 8080, protocol: "TCP" }]);
    const addresses = (slice?.endpoints ?? []).filter((e) => e.conditions.ready).flatMap((e) => e.addresses);
    assert.deepEqual(addresses.sort(), pods.map((p) => p.status?.podIP).sort());
    const served = await Promise.all(addresses.map(async (ip) => (await answers(ip)).pod));
    assert.deepEqual(served.sort(), pods.map((p) => p.metadata.name).sort());
  });

  it("scales up and down, starting and stopping processes", async () => {
    await f.ok("scale", "deployment", "web", "--replicas=3");
    await rolledOut();
    assert.equal((await webPods()).length, 3);
    assert.equal(processesWith(marker).length, 3);
    await f.ok("scale", "deployment", "web", "--replicas=1");
    await eventually("one process left", () => processesWith(marker).length === 1);
    await rolledOut();
    assert.equal((await webPods()).length, 1);
    await eventually("one endpoint left", async () => {
      const slice = JSON.parse(
        await f.ok("get", "endpointslices", "-l", "kubernetes.io/service-name=web", "-o", "json"),
      ).items[0] as EndpointSlice;
      return slice.endpoints.length === 1;
    });
  });

  it("rolls out a new pod template, keeps history and undoes it", async () => {
    await f.ok("scale", "deployment", "web", "--replicas=2");
    await rolledOut();
    await f.ok("set", "env", "deployment/web", "VERSION=2");
    await rolledOut();
    const pods = await webPods();
    assert.equal(pods.length, 2);
    for (const pod of pods) assert.equal((await answers(pod.status?.podIP ?? "")).version, "2");
    const replicaSets = await f.ok(
      "get",
      "rs",
      "-l",
      "app=web",
      "-o",
      "custom-columns=REVISION:.metadata.annotations.deployment\\.kubernetes\\.io/revision,DESIRED:.spec.replicas",
      "--no-headers",
    );
    assert.deepEqual(
      replicaSets
        .trim()
        .split("\n")
        .map((l) => l.trim().split(/\s+/))
        .sort(),
      [
        ["1", "0"],
        ["2", "2"],
      ],
    );
    assert.match(await f.ok("rollout", "history", "deployment/web"), /REVISION[\s\S]*1\s[\s\S]*2\s/);
    await f.ok("rollout", "undo", "deployment/web");
    await rolledOut();
    await eventually("two pods at version 1", async () => {
      const current = await webPods();
      if (current.length !== 2) return false;
      const versions = await Promise.all(
        current.map(async (p) => (await answers(p.status?.podIP ?? "")).version),
      );
      return versions.every((v) => v === "1");
    });
  });

  it("deleting the Deployment removes its ReplicaSets, pods and processes", async () => {
    await f.ok("delete", "deployment", "web", "--wait=true");
    await eventually("no pods", async () => (await webPods()).length === 0);
    await eventually("no processes", () => processesWith(marker).length === 0);
    assert.match(await f.ok("get", "rs", "-l", "app=web"), /^$/);
  });

  it("rolls out a StatefulSet's ordinal pods one after the other", async () => {
    const sts = {
      apiVersion: "apps/v1",
      kind: "StatefulSet",
      metadata: { name: "db" },
      spec: {
        replicas: 2,
        serviceName: "db",
        selector: { matchLabels: { app: "db" } },
        template: {
          metadata: { labels: { app: "db" } },
          spec: {
            terminationGracePeriodSeconds: 5,
            containers: [
              serverContainer(`${marker}-db`, {
                readinessProbe: { tcpSocket: { port: 8080 }, periodSeconds: 1 },
              }),
            ],
          },
        },
      },
    };
    await f.ok("apply", "-f", f.file("db.yaml", toYaml(sts)));
    await rolledOut("statefulset/db");
    const names = JSON.parse(await f.ok("get", "pods", "-l", "app=db", "-o", "json")).items.map(
      (p: Pod) => p.metadata.name,
    );
    assert.deepEqual(names.sort(), ["db-0", "db-1"]);
    assert.equal((await answers(f.pod("db-1").status?.podIP ?? "")).pod, "db-1");
    await f.ok("delete", "statefulset", "db");
    await eventually("no db processes", () => processesWith(`${marker}-db`).length === 0);
  });

  for (const release of ["v31", "v35"] as const) {
    it(`helm ${release === "v31" ? "3" : "4"} install --wait returns once the pods are ready`, async () => {
      const chartDir = path.join(f.dir, `chart-${release}`);
      mkdirSync(path.join(chartDir, "templates"), { recursive: true });
      f.file(`chart-${release}/Chart.yaml`, "apiVersion: v2\nname: web\nversion: 0.1.0\n");
      const deployment = webDeployment(`${marker}-helm`, 1, "1");
      f.file(`chart-${release}/templates/web.yaml`, toYaml(deployment, webService));
      const helm = clientBinaries(release).helm;
      const env = {
        PATH: process.env["PATH"] ?? "",
        HOME: f.dir,
        KUBECONFIG: f.kubeconfig,
        HELM_CACHE_HOME: path.join(f.dir, `helm-${release}`, "cache"),
        HELM_CONFIG_HOME: path.join(f.dir, `helm-${release}`, "config"),
        HELM_DATA_HOME: path.join(f.dir, `helm-${release}`, "data"),
      };
      const namespace = `helm-${release}`;
      const install = await runClient(
        helm,
        [
          "install",
          "web",
          chartDir,
          "--namespace",
          namespace,
          "--create-namespace",
          "--wait",
          "--timeout",
          "60s",
        ],
        env,
        f.dir,
      );
      assert.equal(install.code, 0, install.stderr);
      const ready = await f.ok(
        "get",
        "deployment",
        "web",
        "-n",
        namespace,
        "-o",
        "jsonpath={.status.readyReplicas}",
      );
      assert.equal(ready, "1");
      const uninstall = await runClient(
        helm,
        ["uninstall", "web", "--namespace", namespace, "--wait"],
        env,
        f.dir,
      );
      assert.equal(uninstall.code, 0, uninstall.stderr);
    });
  }
});
