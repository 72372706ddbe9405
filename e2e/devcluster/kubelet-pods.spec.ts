// The process kubelet with real kubectl: pods run as host processes on their own loopback IPs,
// with env from fieldRef, ConfigMaps and Secrets; probes (httpGet, grpc, tcpSocket, exec) gate
// readiness and restart unhealthy containers; restarts are counted and logs kept (--previous);
// restartPolicy and the termination grace period are honoured; capacity limits scheduling.
import assert from "node:assert/strict";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import {
  type DevClusterFixture,
  eventually,
  httpGet,
  processesWith,
  startDevClusterFixture,
} from "./kubelet-fixture.ts";
import { pod, scriptContainer, serverContainer, toYaml } from "./kubelet-manifests.ts";

describe("process kubelet with kubectl (e2e)", function () {
  this.timeout(60_000);
  let f: DevClusterFixture;
  const marker = `kubelet-e2e-${process.pid}`;
  const restarts = (name: string) => f.pod(name).status?.containerStatuses?.[0]?.restartCount ?? 0;
  /** Waits until the pod's server answers (Ready without a readiness probe comes before it listens). */
  const serving = (name: string) =>
    eventually(`${name} to serve`, async () => {
      const ip = f.pod(name).status?.podIP;
      return ip && (await httpGet(ip, 8080)) ? ip : undefined;
    });
  const apply = (name: string, ...docs: Record<string, unknown>[]) =>
    f.ok("apply", "-f", f.file(`${name}.yaml`, toYaml(...docs)));

  before(async () => {
    f = await startDevClusterFixture();
  });
  after(async () => {
    await f.close();
    assert.deepEqual(processesWith(marker), [], "no pod process outlives the cluster");
  });

  it("registers a node with its declared capacity", async () => {
    const node = JSON.parse(await f.ok("get", "node", "tessera-node", "-o", "json"));
    assert.deepEqual(node.status.allocatable, {
      cpu: "8",
      memory: "16Gi",
      "nvidia.com/gpu": "1",
      pods: "110",
    });
    assert.match(await f.ok("get", "nodes"), /tessera-node\s+Ready/);
  });

  it("runs a pod's command on its own loopback IP with env from fieldRef, ConfigMap and Secret", async () => {
    await f.ok("create", "configmap", "greetings", "--from-literal=greeting=hello");
    await f.ok("create", "secret", "generic", "creds", "--from-literal=token=s3cret");
    await apply(
      "hello",
      pod("hello", [
        serverContainer(`${marker}-hello`, {}, [
          { name: "GREETING", valueFrom: { configMapKeyRef: { name: "greetings", key: "greeting" } } },
          { name: "TOKEN", valueFrom: { secretKeyRef: { name: "creds", key: "token" } } },
        ]),
      ]),
    );
    await f.ok("wait", "--for=condition=Ready", "pod/hello", "--timeout=30s");
    await serving("hello");
    const wide = await f.ok("get", "pod", "hello", "-o", "wide");
    const ip = f.pod("hello").status?.podIP ?? "";
    assert.ok(ip.startsWith(f.podCidr.split(".0.0/")[0] ?? "?"), `${ip} is in ${f.podCidr}`);
    assert.match(
      wide,
      new RegExp(`hello\\s+1/1\\s+Running\\s+0\\s+\\S+\\s+${ip.replaceAll(".", "\\.")}\\s+tessera-node`),
    );
    const answer = JSON.parse(await httpGet(ip, 8080));
    assert.deepEqual(answer, { pod: "hello", namespace: "default", ip, greeting: "hello", token: "s3cret" });
    assert.match(await f.ok("logs", "hello"), new RegExp(`^listening on ${ip}:8080\\n$`));
    assert.match(await f.ok("logs", "hello", "--timestamps"), /^\d{4}-\d\d-\d\dT[\d:.]+Z listening on/);
  });

  it("restarts a killed process, counts it, and keeps the previous run's log", async () => {
    const before = f.pod("hello");
    const pid = Number(before.status?.containerStatuses?.[0]?.containerID?.replace("process://", ""));
    assert.ok(pid > 0 && processesWith(`${marker}-hello`).includes(pid));
    process.kill(pid, "SIGKILL");
    await eventually("restartCount 1", () => restarts("hello") === 1);
    await f.ok("wait", "--for=condition=Ready", "pod/hello", "--timeout=30s");
    const status = f.pod("hello").status?.containerStatuses?.[0];
    assert.equal(status?.lastState.terminated?.exitCode, 137);
    assert.notEqual(status?.containerID, before.status?.containerStatuses?.[0]?.containerID);
    assert.match(await f.ok("get", "pod", "hello"), /hello\s+1\/1\s+Running\s+1\b/);
    assert.match(await f.ok("logs", "hello", "--previous"), /^listening on /);
  });

  it("restarts a container whose liveness probe fails", async () => {
    const healthz = { httpGet: { path: "/healthz", port: "http" }, periodSeconds: 1 };
    const probes = {
      startupProbe: { ...healthz, failureThreshold: 30 },
      livenessProbe: { ...healthz, failureThreshold: 1 },
    };
    await apply("live", pod("live", [serverContainer(`${marker}-live`, probes)]));
    const ip = await serving("live");
    await f.ok("wait", "--for=condition=Ready", "pod/live", "--timeout=30s");
    await httpGet(ip, 8080, "/set-unhealthy");
    await eventually("a restart after the liveness failure", () => restarts("live") === 1);
    const events = await f.ok("get", "events", "--field-selector", "involvedObject.name=live");
    assert.match(
      events,
      /Unhealthy\s+pod\/live\s+Liveness probe failed: HTTP probe failed with statuscode: 500/,
    );
    assert.match(events, /Killing\s+pod\/live\s+Container server failed liveness probe, will be restarted/);
  });

  it("keeps a pod out of Ready until its readiness probe passes", async () => {
    const readiness = { httpGet: { path: "/ready", port: "http" }, periodSeconds: 1 };
    await apply(
      "gated",
      pod("gated", [
        serverContainer(`${marker}-gated`, { readinessProbe: readiness }, [
          { name: "START_READY", value: "0" },
        ]),
      ]),
    );
    const ip = await serving("gated");
    assert.match(await f.ok("get", "pod", "gated"), /gated\s+0\/1\s+Running/);
    assert.equal(f.pod("gated").status?.conditions?.find((c) => c.type === "Ready")?.status, "False");
    await httpGet(ip, 8080, "/set-ready");
    await f.ok("wait", "--for=condition=Ready", "pod/gated", "--timeout=30s");
  });

  it("runs grpc, tcpSocket and exec probes", async () => {
    const grpcServer = `const grpc = require("@grpc/grpc-js");
      const { HealthImplementation } = require("grpc-health-check");
      const server = new grpc.Server();
      new HealthImplementation({ "": "SERVING" }).addToServer(server);
      server.bindAsync(process.env.POD_IP + ":9090", grpc.ServerCredentials.createInsecure(), () => {});`;
    await apply(
      "probes",
      pod("probes", [
        scriptContainer("grpc", `${marker}-probes`, grpcServer, {
          env: [{ name: "POD_IP", valueFrom: { fieldRef: { fieldPath: "status.podIP" } } }],
          startupProbe: { grpc: { port: 9090 }, periodSeconds: 1, failureThreshold: 30 },
          readinessProbe: { tcpSocket: { port: 9090 }, periodSeconds: 1 },
          livenessProbe: { exec: { command: ["node", "-e", "process.exit(0)"] }, periodSeconds: 1 },
        }),
      ]),
    );
    await f.ok("wait", "--for=condition=Ready", "pod/probes", "--timeout=30s");
    assert.equal(f.pod("probes").status?.containerStatuses?.[0]?.started, true);
  });

  it("honours restartPolicy Never and OnFailure, and reports exit codes", async () => {
    await apply(
      "once",
      pod("fails", [scriptContainer("main", `${marker}-once`, "console.log('bye'); process.exit(3)")], {
        restartPolicy: "Never",
      }),
      pod("succeeds", [scriptContainer("main", `${marker}-once`, "process.exit(0)")], {
        restartPolicy: "OnFailure",
      }),
    );
    await f.ok("wait", "--for=jsonpath={.status.phase}=Failed", "pod/fails", "--timeout=30s");
    await f.ok("wait", "--for=jsonpath={.status.phase}=Succeeded", "pod/succeeds", "--timeout=30s");
    const failed = f.pod("fails").status?.containerStatuses?.[0];
    assert.equal(failed?.state.terminated?.exitCode, 3);
    assert.equal(failed?.restartCount, 0);
    assert.match(
      await f.ok("get", "pods", "fails", "succeeds"),
      /fails\s+0\/1\s+Error\s+0[\s\S]*succeeds\s+0\/1\s+Completed\s+0/,
    );
    assert.equal(await f.ok("logs", "fails"), "bye\n");
  });

  it("runs a container's `node` as the Node that runs the cluster, whichever `node` the host's PATH finds first", async () => {
    // A host whose PATH finds another Node first (Debian's nodejs 20 in /usr/bin, say, when the
    // cluster runs as node_modules/.bin/node outside npm): pods must still get the cluster's Node,
    // the one the repository's TypeScript (the WorkerPool's `node services/cli/main.ts`) runs on.
    const decoy = path.join(f.dir, "decoy-bin");
    mkdirSync(decoy);
    writeFileSync(path.join(decoy, "node"), "#!/bin/sh\necho decoy node\nexit 1\n", { mode: 0o755 });
    const hostPath = process.env["PATH"] ?? "";
    process.env["PATH"] = `${decoy}:${hostPath}`;
    try {
      await apply(
        "version",
        pod("version", [scriptContainer("main", `${marker}-version`, "console.log(process.version)")], {
          restartPolicy: "Never",
        }),
      );
      await eventually("pod/version to end", () =>
        /^(Succeeded|Failed)$/.test(f.pod("version").status?.phase ?? ""),
      );
    } finally {
      process.env["PATH"] = hostPath;
    }
    assert.equal(await f.ok("logs", "version"), `${process.version}\n`);
    assert.equal(f.pod("version").status?.phase, "Succeeded");
  });

  it("follows a container's log until the container exits", async () => {
    const talker =
      "let i = 0; const t = setInterval(() => { console.log('line ' + i++); if (i === 5) clearInterval(t); }, 100);";
    await apply(
      "talker",
      pod("talker", [scriptContainer("main", `${marker}-talker`, talker)], { restartPolicy: "Never" }),
    );
    await f.ok("wait", "--for=condition=Ready", "pod/talker", "--timeout=30s");
    assert.equal(await f.ok("logs", "-f", "talker"), "line 0\nline 1\nline 2\nline 3\nline 4\n");
    assert.equal(await f.ok("logs", "talker", "--tail=2"), "line 3\nline 4\n");
  });

  it("stops a deleted pod with SIGTERM, then SIGKILL after its grace period, leaving no process", async () => {
    const dir = path.join(f.dir, "signals");
    mkdirSync(dir);
    const stubborn = `require("node:fs").writeFileSync(process.env.OUT + "/started", "");
      process.on("SIGTERM", () => require("node:fs").writeFileSync(process.env.OUT + "/sigterm", ""));
      setInterval(() => {}, 1000);`;
    await apply(
      "stubborn",
      pod(
        "stubborn",
        [
          scriptContainer("main", `${marker}-stubborn`, stubborn, {
            env: [{ name: "OUT", value: "/out" }],
            volumeMounts: [{ name: "out", mountPath: "/out" }],
          }),
        ],
        { terminationGracePeriodSeconds: 1, volumes: [{ name: "out", hostPath: { path: dir } }] },
      ),
    );
    await eventually("the process to start", () => existsSync(path.join(dir, "started")));
    assert.equal(processesWith(`${marker}-stubborn`).length, 1);
    await f.ok("delete", "pod", "stubborn", "--wait=true", "--timeout=30s");
    assert.ok(existsSync(path.join(dir, "sigterm")), "the process got SIGTERM first");
    assert.deepEqual(processesWith(`${marker}-stubborn`), []);
  });

  it("keeps a pod that asks for more than the node has Pending as Unschedulable", async () => {
    await apply(
      "greedy",
      pod("greedy", [
        scriptContainer("main", `${marker}-greedy`, "", { resources: { limits: { "nvidia.com/gpu": "2" } } }),
      ]),
    );
    await f.ok("wait", "--for=condition=PodScheduled=false", "pod/greedy", "--timeout=30s");
    const scheduled = f.pod("greedy").status?.conditions?.find((c) => c.type === "PodScheduled");
    assert.equal(scheduled?.reason, "Unschedulable");
    assert.equal(scheduled?.message, "0/1 nodes are available: 1 Insufficient nvidia.com/gpu.");
    assert.match(await f.ok("get", "pod", "greedy"), /greedy\s+0\/1\s+Pending/);
    await f.ok("delete", "pod", "greedy");
  });

  it("gives a container its GPU and volumes as host folders", async () => {
    const script = `const fs = require("node:fs");
      fs.writeFileSync(process.argv[1] + "/gpu", process.env.CUDA_VISIBLE_DEVICES);
      fs.writeFileSync(process.argv[1] + "/config", fs.readFileSync("/etc/app/app.conf".replace("/etc/app", process.env.CONF)));
      setInterval(() => {}, 1000);`;
    await f.ok("create", "configmap", "app-conf", "--from-literal=app.conf=x=1");
    await apply(
      "gpu",
      pod(
        "gpu",
        [
          scriptContainer("main", `${marker}-gpu`, script, {
            args: ["/scratch"],
            env: [{ name: "CONF", value: "/etc/app" }],
            resources: { limits: { "nvidia.com/gpu": "1" } },
            volumeMounts: [
              { name: "scratch", mountPath: "/scratch" },
              { name: "conf", mountPath: "/etc/app" },
            ],
          }),
        ],
        {
          volumes: [
            { name: "scratch", emptyDir: {} },
            { name: "conf", configMap: { name: "app-conf" } },
          ],
        },
      ),
    );
    const uid = await eventually("the pod to run", () =>
      f.pod("gpu").status?.phase === "Running" ? f.pod("gpu").metadata.uid : undefined,
    );
    const scratch = path.join(f.dir, "kubelet", "pods", `default_gpu_${uid}`, "volumes", "scratch");
    await eventually("the files", () => existsSync(path.join(scratch, "config")));
    assert.equal(readFileSync(path.join(scratch, "gpu"), "utf8"), "0");
    assert.equal(readFileSync(path.join(scratch, "config"), "utf8"), "x=1");
    await f.ok("delete", "pod", "gpu");
    assert.equal(existsSync(scratch), false, "emptyDir goes with the pod");
  });
});
