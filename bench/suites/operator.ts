// `npm run bench -- operator [--runs N] [--models N]`: the operator's control-path latency (issue 6),
// with a real `tessera operator` process against the dev cluster:
//   a. a 2 x 2 InferenceModel (one replica, 4 pods) with real `tessera serve` workers run by the
//      process kubelet: apply -> all 4 pods created, and apply -> model Ready minus the model load
//      (first pod created -> last pod Ready: process start, weight load, readiness probe);
//   b. 100 single-pod InferenceModels applied at once -> every one Ready, Converged, with status for
//      its generation. Pods are made Ready by a simulated kubelet (100 real workers do not fit a
//      2-core machine); this measures the operator and API path, not model loading.
// Times come from watches on the API server in this process.

import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import type { ClusterApi } from "../../devtools/devcluster/apiserver/cluster/cluster-api.ts";
import { startDevCluster as startFullDevCluster } from "../../devtools/devcluster/dev-cluster.ts";
import { startOperatorProcess } from "../../e2e/operator/operator-process.ts";
import { startDevCluster } from "../../operator/testing/dev-cluster.ts";
import { inferenceModel, workerPool } from "../../operator/testing/fixtures.ts";
import { PodSimulator } from "../../operator/testing/pod-simulator.ts";
import { crdOf } from "../../services/api/crd-builder.ts";
import { INFERENCE_MODELS, WORKER_POOLS } from "../../services/api/group.ts";
import { KINDS } from "../../services/api/kinds.ts";
import { createLogger } from "../../services/kernel/log.ts";
import type { KubeObject } from "../../services/kube/kube-object.ts";
import { check, writeResult } from "../report.ts";

const ROOT = path.resolve(import.meta.dirname, "../..");
const CRDS = { group: "apiextensions.k8s.io", version: "v1", resource: "customresourcedefinitions" };
const PODS = { group: "", version: "v1", resource: "pods" };
const log = createLogger("bench-operator", "warn");

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;
const seconds = (ms: number) => Math.round(ms) / 1000;

type Status = { conditions?: { type: string; status: string }[]; observedGeneration?: number };
const isReady = (o: KubeObject) =>
  ((o as { status?: Status }).status?.conditions ?? []).some(
    (c) => c.type === "Ready" && c.status === "True",
  );
const isConverged = (o: KubeObject) => {
  const status = (o as { status?: Status }).status;
  const progressing = status?.conditions?.find((c) => c.type === "Progressing");
  return (
    isReady(o) && progressing?.status === "False" && status?.observedGeneration === o.metadata.generation
  );
};

/** Calls back with the time each object first satisfies a predicate (watch on the in-process API). */
function watchFirst(
  api: ClusterApi,
  ref: typeof PODS,
  namespace: string,
  predicate: (o: KubeObject) => boolean,
) {
  const seen = new Map<string, number>();
  const handle = api.watch(ref, { namespace, resourceVersion: api.resourceVersion }, (event) => {
    const name = event.object.metadata.name ?? "";
    if (event.type !== "DELETED" && !seen.has(name) && predicate(event.object))
      seen.set(name, performance.now());
  });
  return { seen, stop: () => handle.stop() };
}

async function until(what: string, condition: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!condition()) {
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** a. One 2 x 2 group with real workers. */
async function groupRuns(runs: number) {
  const dir = mkdtempSync(path.join(os.tmpdir(), "tessera-bench-operator-"));
  const modelDir = path.join(dir, "tiny-llama");
  const made = spawnSync(
    process.execPath,
    [
      "services/cli/main.ts",
      "model",
      "create",
      "--arch",
      "llama",
      "--preset",
      "tiny",
      "--seed",
      "1",
      "--out",
      modelDir,
    ],
    { cwd: ROOT },
  );
  if (made.status !== 0) throw new Error(`model create failed: ${made.stderr}`);
  const kubeconfig = path.join(dir, "kubeconfig");
  const cluster = await startFullDevCluster(
    {
      kubeconfigPath: kubeconfig,
      node: {
        podCidr: "127.77.0.0/16",
        rootDir: path.join(dir, "kubelet"),
        capacity: { cpu: "16", memory: "32Gi" },
      },
    },
    { log },
  );
  const api = cluster.server.api;
  for (const kind of KINDS) api.create(CRDS, "", crdOf(kind) as unknown as KubeObject);
  const operator = await startOperatorProcess(kubeconfig);
  // The dev cluster has no DNS for the peers' names (<hostname>.<model>-workers.<ns>.svc), so the
  // group cannot form there yet: each pod serves the whole model on its own (env -u drops the group
  // size the operator sets). The operator's path - plan, pods, gang readiness, status - is the same.
  const command = [
    "env",
    "-u",
    "TESSERA_NUM_STAGES",
    "-u",
    "TESSERA_TENSOR_SIZE",
    process.execPath,
    path.join(ROOT, "services/cli/main.ts"),
  ];
  api.create(WORKER_POOLS, "default", workerPool("default", { command }));
  const results: { createdS: number; podsReadyS: number; readyS: number; modelLoadS: number }[] = [];
  try {
    for (let run = 0; run < runs; run++) {
      const name = `group-${run}`;
      const spec = { model: { path: modelDir, numLayers: 2 }, parallelism: { tensor: 2, pipeline: 2 } };
      const created = watchFirst(
        api,
        PODS,
        "default",
        (p) => p.metadata.labels?.["serving.tessera.dev/model"] === name,
      );
      const podsReady = watchFirst(
        api,
        PODS,
        "default",
        (p) =>
          p.metadata.labels?.["serving.tessera.dev/model"] === name &&
          ((p as { status?: Status }).status?.conditions ?? []).some(
            (c) => c.type === "Ready" && c.status === "True",
          ),
      );
      const modelReady = watchFirst(api, INFERENCE_MODELS, "default", isReady);
      const t0 = performance.now();
      api.create(INFERENCE_MODELS, "default", inferenceModel(name, spec));
      await until("model Ready", () => modelReady.seen.has(name), 120_000);
      const createdAt = Math.max(...created.seen.values());
      const firstCreated = Math.min(...created.seen.values());
      const lastPodReady = Math.max(...podsReady.seen.values());
      results.push({
        createdS: seconds(createdAt - t0),
        podsReadyS: seconds(lastPodReady - t0),
        readyS: seconds(modelReady.seen.get(name)! - t0),
        modelLoadS: seconds(lastPodReady - firstCreated),
      });
      for (const w of [created, podsReady, modelReady]) w.stop();
      api.delete(INFERENCE_MODELS, "default", name);
      await until("pods gone", () => api.list(PODS, { namespace: "default" }).items.length === 0, 60_000);
    }
  } finally {
    operator.child.kill("SIGTERM");
    await operator.exited;
    await cluster.close({ graceSeconds: 0 });
    rmSync(dir, { recursive: true, force: true });
  }
  return results;
}

/** b. Many single-pod models with a simulated kubelet. */
async function manyModels(count: number) {
  const cluster = await startDevCluster();
  const kubelet = new PodSimulator(cluster.server.api);
  kubelet.start();
  // Simulated pods run no worker to ask which model it serves.
  const operator = await startOperatorProcess(cluster.kubeconfig, [
    "--workers",
    "8",
    "--no-served-name-check",
  ]);
  const api = cluster.server.api;
  try {
    api.create(WORKER_POOLS, "default", workerPool("default", { maxPods: count * 2 }));
    const converged = watchFirst(api, INFERENCE_MODELS, "default", isConverged);
    const user = cluster.client("bench-user");
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: count }, (_, i) =>
        user.apply(INFERENCE_MODELS, "default", inferenceModel(`m-${i}`, { replicas: 1 })),
      ),
    );
    const applied = performance.now();
    await until(`${count} models converged`, () => converged.seen.size === count, 120_000);
    const done = Math.max(...converged.seen.values());
    converged.stop();
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    return {
      models: count,
      applyS: seconds(applied - t0),
      convergeS: seconds(done - t0),
      medianModelS: seconds(median([...converged.seen.values()]) - t0),
      reconciles: await operator.reconciles("inferencemodel"),
      pods: api.list(PODS, { namespace: "default" }).items.length,
    };
  } finally {
    operator.child.kill("SIGTERM");
    await operator.exited;
    kubelet.stop();
    await cluster.close();
  }
}

export async function run(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: { runs: { type: "string", default: "3" }, models: { type: "string", default: "100" } },
  });
  const group = await groupRuns(Number(values.runs));
  const many = await manyModels(Number(values.models));
  const created = median(group.map((r) => r.createdS));
  const readyMinusLoad = seconds(median(group.map((r) => r.readyS - r.modelLoadS)) * 1000);
  writeResult({
    suite: "operator",
    description:
      "A `tessera operator` process on the dev cluster. a. A 2 x 2 InferenceModel (4 pods) with real tiny-preset `tessera serve` workers on the process kubelet: apply -> all 4 pods created, and apply -> Ready minus the model load (first pod created -> last pod Ready), median of runs. b. 100 single-pod InferenceModels applied at once -> all Ready, Converged and observed, pods made Ready by a simulated kubelet",
    figures: { group, groupMedian: { createdS: created, readyMinusModelLoadS: readyMinusLoad }, many },
    checks: [
      check("4-pod group: apply -> all pods created (s)", created, "<=", 2),
      check("4-pod group: apply -> Ready minus model load (s)", readyMinusLoad, "<=", 5),
      check(`${many.models} InferenceModels: apply -> all converged (s)`, many.convergeS, "<=", 10),
    ],
  });
}
