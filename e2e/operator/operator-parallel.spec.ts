// A tensor-parallel replica end to end on the dev cluster (API server, scheduler, process kubelet) with
// real kubectl, a real `tessera operator` and real `tessera serve` workers: an InferenceModel with
// parallelism.tensor 2 becomes one group of two pods that find each other by their pod DNS names (on the
// dev cluster through the kubelet's hosts file, TESSERA_HOSTS_FILE) -> Ready -> Generate on the entry
// shard gives the greedy tokens of a single-process `tessera generate`. Deleting a pod of the group
// takes the replica down; the pod is replaced, the group forms again and serves the same tokens. A
// pipeline-parallel replica (2 stages) does the same.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { tinyCheckpoint } from "../checkpoint.ts";
import { type DevClusterFixture, eventually, startDevClusterFixture } from "../devcluster/kubelet-fixture.ts";
import { generateIds, localGreedyIds } from "./generate-client.ts";
import { type OperatorProcess, startOperatorProcess } from "./operator-process.ts";
import { prepareServingNamespace } from "./serving-namespace.ts";

interface Shard {
  replica: number;
  stage: number;
  rank: number;
  endpoint?: string;
  ready: boolean;
  entry: boolean;
  pod: string;
}
interface ModelStatus {
  readyReplicas?: number;
  shards?: Shard[];
  conditions?: { type: string; status: string; reason: string }[];
}
interface PodList {
  items: {
    metadata: { name: string; uid: string };
    spec: { hostname?: string; subdomain?: string };
    status: { phase?: string; podIP?: string; conditions?: { type: string; status: string }[] };
  }[];
}

describe("parallel replicas on the dev cluster, from kubectl apply to Generate (e2e)", function () {
  this.timeout(240_000);
  let f: DevClusterFixture;
  let operator: OperatorProcess;
  let expected: number[];
  let modelPath: string;
  const ns = "parallel";
  const name = "tiny-tp";

  const status = async (): Promise<ModelStatus> =>
    JSON.parse(
      await f.ok("get", "inferencemodel", name, "-n", ns, "-o", "jsonpath={.status}"),
    ) as ModelStatus;
  /** The group's worker pods (the model's other pods, such as its router, have no subdomain). */
  const pods = async (): Promise<PodList> => {
    const list = JSON.parse(await f.ok("get", "pods", "-n", ns, "-o", "json")) as PodList;
    return { items: list.items.filter((p) => p.spec.subdomain === `${name}-workers`) };
  };
  const isReady = (pod: PodList["items"][number]) =>
    pod.status.conditions?.some((c) => c.type === "Ready" && c.status === "True") ?? false;

  before(async () => {
    const modelDir = await tinyCheckpoint();
    [f, expected] = await Promise.all([startDevClusterFixture("v35"), localGreedyIds(modelDir)]);
    await prepareServingNamespace(f, ns);
    operator = await startOperatorProcess(await f.operatorKubeconfig());
    // The architecture and dtype reach the workers as TESSERA_ARCHITECTURE / TESSERA_DTYPE.
    const manifest = [
      "apiVersion: serving.tessera.dev/v1alpha1",
      "kind: InferenceModel",
      `metadata: {name: ${name}}`,
      "spec:",
      `  model: {path: ${modelDir}, architecture: llama, dtype: float32}`,
      "  replicas: 1",
      "  parallelism: {tensor: 2}",
      "",
    ].join("\n");
    await f.ok("apply", "-n", ns, "-f", f.file("tiny-tp.yaml", manifest));
    modelPath = modelDir;
  });
  after(async () => {
    operator?.child.kill("SIGTERM");
    await operator?.exited;
    await f?.close();
  });

  it("forms the group: both pods Running and Ready, the model Ready, Generate equals `tessera generate`", async () => {
    await f.ok("wait", "-n", ns, "--for=condition=Ready", `inferencemodel/${name}`, "--timeout=120s");
    const list = await pods();
    assert.equal(list.items.length, 2, list.items.map((p) => p.metadata.name).join(", "));
    for (const pod of list.items) {
      assert.equal(pod.status.phase, "Running", pod.metadata.name);
      assert.ok(isReady(pod), `${pod.metadata.name} is Ready`);
    }
    const hosts = readFileSync(f.cluster.kubelet.hostsFile, "utf8");
    for (const pod of list.items)
      assert.ok(
        hosts.includes(`${pod.status.podIP} ${pod.spec.hostname}.${name}-workers.${ns}.svc.cluster.local`),
        hosts,
      );
    const shards = (await status()).shards ?? [];
    assert.deepEqual(shards.map((s) => [s.replica, s.stage, s.rank, s.entry, s.ready]).sort(), [
      [0, 0, 0, true, true],
      [0, 0, 1, false, true],
    ]);
    const entry = shards.find((s) => s.entry)!;
    assert.deepEqual(await generateIds(entry.endpoint!), expected);
  });

  it("a deleted member takes the replica down; its replacement forms the group again, which serves", async () => {
    const before = await status();
    const member = before.shards?.find((s) => !s.entry);
    assert.ok(member, JSON.stringify(before));
    const old = (await pods()).items.find((p) => p.metadata.name === member.pod);
    await f.ok("delete", "pod", "-n", ns, member.pod, "--wait=false");
    await eventually(
      "the replica NotReady",
      async () => {
        const s = await status();
        return (
          (s.readyReplicas ?? 0) === 0 && s.conditions?.find((c) => c.type === "Ready")?.status === "False"
        );
      },
      60_000,
    );
    await f.ok("wait", "-n", ns, "--for=condition=Ready", `inferencemodel/${name}`, "--timeout=150s");
    const list = await pods();
    const replaced = list.items.find((p) => p.metadata.name === member.pod);
    assert.ok(replaced && replaced.metadata.uid !== old?.metadata.uid, "the pod was replaced");
    assert.notEqual(replaced.status.podIP, old?.status.podIP, "the replacement has a new pod IP");
    const hosts = readFileSync(f.cluster.kubelet.hostsFile, "utf8");
    assert.ok(hosts.includes(`${replaced.status.podIP} ${replaced.spec.hostname}.${name}-workers.`), hosts);
    assert.ok(list.items.every(isReady), "both pods Ready again");
    const entry = (await status()).shards?.find((s) => s.entry && s.ready);
    assert.ok(entry?.endpoint, JSON.stringify(await status()));
    assert.deepEqual(await generateIds(entry.endpoint), expected);
  });

  it("a pipeline-parallel replica (2 stages, one layer each) forms and serves the same tokens", async () => {
    await f.ok("delete", "inferencemodel", "-n", ns, name, "--wait=true", "--timeout=60s");
    const manifest = [
      "apiVersion: serving.tessera.dev/v1alpha1",
      "kind: InferenceModel",
      "metadata: {name: tiny-pp}",
      "spec:",
      `  model: {path: ${modelPath}, numLayers: 2}`,
      "  replicas: 1",
      "  parallelism: {pipeline: 2}",
      "",
    ].join("\n");
    await f.ok("apply", "-n", ns, "-f", f.file("tiny-pp.yaml", manifest));
    await f.ok("wait", "-n", ns, "--for=condition=Ready", "inferencemodel/tiny-pp", "--timeout=120s");
    const shards =
      (
        JSON.parse(
          await f.ok("get", "inferencemodel", "tiny-pp", "-n", ns, "-o", "jsonpath={.status}"),
        ) as ModelStatus
      ).shards ?? [];
    assert.deepEqual(shards.map((s) => [s.stage, s.rank, s.entry, s.ready]).sort(), [
      [0, 0, true, true],
      [1, 0, false, true],
    ]);
    assert.deepEqual(await generateIds(shards.find((s) => s.entry)?.endpoint ?? ""), expected);
  });
});
