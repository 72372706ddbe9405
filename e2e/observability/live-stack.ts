// A live local deployment for the observability tests: Redis, two `tessera serve` workers using it as
// their KV tier, a `tessera router` over them plus one endpoint whose Generate fails (so retries and an
// ejection happen), a second `tessera router` that serves disaggregated (worker 0 listed as its prefill
// endpoint, worker 1 as its decode endpoint), and a `tessera operator` against a dev cluster API server
// holding a WorkerPool and an InferenceModel. Workers and routers send traces to an OTLP receiver;
// every part serves /metrics.
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { createInterface } from "node:readline";
import { Inference } from "../../proto/gen/tessera/v1/inference_pb.js";
import { type Served, startServe } from "../../services/cli/child-process.ts";
import { GrpcClient } from "../../services/rpc/grpc-client.ts";
import { waitUntilServing } from "../../services/rpc/health-client.ts";
import { RedisServer } from "../../services/worker/kv-transfer/redis-harness.ts";
import { tinyCheckpoint } from "../checkpoint.ts";
import { clientBinaries } from "../devcluster/client-binaries.ts";
import { type ClusterFixture, startClusterFixture } from "../devcluster/cluster-fixture.ts";
import { type OperatorProcess, startOperatorProcess } from "../operator/operator-process.ts";
import { type FailingWorker, startFailingWorker } from "./failing-worker.ts";
import { type OtlpReceiver, startOtlpReceiver } from "./otlp-receiver.ts";

const root = path.resolve(import.meta.dirname, "../..");
const main = path.join(root, "services/cli/main.ts");

export interface RouterProcess {
  child: ChildProcess;
  grpcAddress: string;
  httpUrl: string;
  metricsAddress: string;
  exited: Promise<unknown>;
}

export interface LiveStack {
  modelDir: string;
  redis: RedisServer;
  receiver: OtlpReceiver;
  workers: Served[];
  /** host:port of each worker's /metrics. */
  workerMetrics: string[];
  router: RouterProcess;
  /** A router whose endpoints are worker 0 (role prefill) and worker 1 (role decode). */
  disaggRouter: RouterProcess;
  cluster: ClusterFixture;
  operator: OperatorProcess;
  /** Patches the InferenceModel (the operator reconciles it). */
  kubectl(...args: string[]): Promise<void>;
  failing: FailingWorker;
  close(): Promise<void>;
}

/** An endpoint of the static endpoints file; no role is "both". */
interface Endpoint {
  address: string;
  role?: "prefill" | "decode" | "both";
}

async function startRouterProcess(
  modelDir: string,
  endpoints: Endpoint[],
  otlpEndpoint: string,
): Promise<RouterProcess & { dir: string }> {
  const dir = mkdtempSync(path.join(os.tmpdir(), "tessera-obs-router-"));
  writeFileSync(
    path.join(dir, "endpoints.json"),
    JSON.stringify({ endpoints: endpoints.map((e) => ({ name: e.address, ...e })) }),
  );
  const config = {
    grpcPort: 0,
    httpPort: 0,
    metricsPort: 0,
    drainTimeoutMs: 1_000,
    models: [{ id: "tiny-llama", tokenizer: modelDir }],
    discovery: { type: "static", file: "endpoints.json", pollMs: 0 },
    // The failing endpoint is ejected at its first failure, for the rest of the test.
    outliers: { consecutiveFailures: 1, baseEjectionMs: 600_000, maxEjectionMs: 600_000 },
  };
  writeFileSync(path.join(dir, "router.json"), JSON.stringify(config));
  const child = spawn(
    process.execPath,
    [main, "router", "--config", path.join(dir, "router.json"), "--otlp-endpoint", otlpEndpoint],
    { cwd: root, stdio: ["ignore", "ignore", "pipe"] },
  );
  const exited = once(child, "exit");
  const lines: string[] = [];
  const ports = await new Promise<Record<string, number>>((resolve, reject) => {
    createInterface({ input: child.stderr! }).on("line", (line) => {
      lines.push(line);
      if (line.includes('"msg":"routing"')) resolve(JSON.parse(line) as Record<string, number>);
    });
    void exited.then(() => reject(new Error(`tessera router exited:\n${lines.join("\n")}`)));
  });
  return {
    dir,
    child,
    exited,
    grpcAddress: `127.0.0.1:${ports["grpcPort"]}`,
    httpUrl: `http://127.0.0.1:${ports["httpPort"]}`,
    metricsAddress: `127.0.0.1:${ports["metricsPort"]}`,
  };
}

const POOL = `apiVersion: serving.tessera.dev/v1alpha1
kind: WorkerPool
metadata: {name: default, namespace: default}
spec: {command: [node, services/cli/main.ts], maxPods: 4}
`;

async function startOperatorCluster(
  modelDir: string,
): Promise<{ cluster: ClusterFixture; operator: OperatorProcess; kubectl: LiveStack["kubectl"] }> {
  const cluster = await startClusterFixture();
  const kubectl = async (...args: string[]) => {
    const run = await cluster.run(clientBinaries("v35").kubectl, args);
    if (run.code !== 0) throw new Error(`kubectl ${args.join(" ")}: ${run.stderr}`);
  };
  await kubectl("apply", "-f", path.join(root, "crds"));
  const operator = await startOperatorProcess(await cluster.operatorKubeconfig());
  const model = `apiVersion: serving.tessera.dev/v1alpha1
kind: InferenceModel
metadata: {name: tiny-llama, namespace: default}
spec: {model: {path: ${modelDir}}, replicas: 1}
`;
  await kubectl("apply", "-f", cluster.file("objects.yaml", `${POOL}---\n${model}`));
  return { cluster, operator, kubectl };
}

export async function startLiveStack(): Promise<LiveStack> {
  const [modelDir, redis, receiver] = await Promise.all([
    tinyCheckpoint(),
    RedisServer.start(),
    startOtlpReceiver(),
  ]);
  const args = ["--kv-redis", redis.url, "--metrics-port", "0", "--otlp-endpoint", receiver.endpoint];
  const [workers, ops] = await Promise.all([
    Promise.all([startServe(modelDir, args), startServe(modelDir, args)]),
    startOperatorCluster(modelDir),
  ]);
  await Promise.all(workers.map((w) => waitUntilServing(w.address, 60_000)));
  const client = new GrpcClient(workers[0]!.address);
  const failing = await startFailingWorker(await client.unary(Inference.method.listModels, {}));
  client.close();
  const [router, disaggRouter] = await Promise.all([
    startRouterProcess(
      modelDir,
      [...workers.map((w) => ({ address: w.address })), { address: failing.address }],
      receiver.endpoint,
    ),
    startRouterProcess(
      modelDir,
      [
        { address: workers[0]!.address, role: "prefill" },
        { address: workers[1]!.address, role: "decode" },
      ],
      receiver.endpoint,
    ),
  ]);
  const workerMetrics = workers.map(
    (w) => `127.0.0.1:${w.logs.find((l) => l["msg"] === "metrics served at /metrics")?.["metricsPort"]}`,
  );
  return {
    modelDir,
    redis,
    receiver,
    workers,
    workerMetrics,
    router,
    disaggRouter,
    ...ops,
    failing,
    close: async () => {
      const stopping = [router, disaggRouter, ...workers, ops.operator].map(async (p) => {
        if (p.child.exitCode === null) p.child.kill("SIGTERM");
        await p.exited;
      });
      await Promise.all(stopping);
      for (const r of [router, disaggRouter]) rmSync(r.dir, { recursive: true, force: true });
      failing.close();
      await Promise.all([ops.cluster.close(), redis.close(), receiver.close()]);
    },
  };
}
