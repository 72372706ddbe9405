// spec.model.quantization end to end on the dev cluster with kubectl, a real `tessera operator` and real
// `tessera serve` workers: an InferenceModel of the `base` preset (88M parameters, 12 layers: the model
// the llama.cpp peer benchmark runs) with quantization int4, split into 2 pipeline stages (each shard quantizes its own layers), becomes Ready and answers through its router
// with the greedy tokens of `tessera serve --quantization int4` run by hand, which are not the float
// model's. Its worker pods carry TESSERA_QUANTIZATION=int4. (That a change of the field rolls the pods
// is operator/placement/planner.spec.ts: the revision hashes it.)
import assert from "node:assert/strict";
import { type Served, startServe } from "../../services/cli/child-process.ts";
import { waitUntilServing } from "../../services/rpc/health-client.ts";
import { baseCheckpoint } from "../checkpoint.ts";
import { type DevClusterFixture, startDevClusterFixture } from "../devcluster/kubelet-fixture.ts";
import { generateIds, localGreedyIds } from "./generate-client.ts";
import { type OperatorProcess, startOperatorProcess } from "./operator-process.ts";
import { prepareServingNamespace } from "./serving-namespace.ts";

interface EndpointSlices {
  items: {
    endpoints?: { addresses: string[]; conditions?: { ready?: boolean } }[];
    ports?: { name?: string; port?: number }[];
  }[];
}
interface PodList {
  items: {
    metadata: { name: string };
    spec: { subdomain?: string; containers: { env?: { name: string; value?: string }[] }[] };
  }[];
}

describe("a quantized model on the dev cluster: spec.model.quantization int4 through the operator (e2e)", function () {
  this.timeout(300_000);
  let f: DevClusterFixture;
  let operator: OperatorProcess;
  let byHand: Served;
  let floatIds: number[];
  let int4Ids: number[];
  const ns = "quantized";
  const name = "base-int4";

  /** host:port of a ready router pod of the model, from its Service's EndpointSlices. */
  const routerAddress = async (): Promise<string> => {
    const label = `kubernetes.io/service-name=${name}-router`;
    const slices = JSON.parse(
      await f.ok("get", "endpointslices", "-n", ns, "-l", label, "-o", "json"),
    ) as EndpointSlices;
    for (const slice of slices.items) {
      const number = slice.ports?.find((p) => p.name === "grpc")?.port;
      const ready = slice.endpoints?.find((e) => e.conditions?.ready === true && e.addresses[0]);
      if (number && ready) return `${ready.addresses[0]}:${number}`;
    }
    throw new Error(`no ready ${name}-router endpoint: ${JSON.stringify(slices)}`);
  };

  before(async () => {
    const modelDir = await baseCheckpoint();
    const served = startServe(modelDir, ["--quantization", "int4", "--threads", "1"]);
    [f, floatIds, byHand] = await Promise.all([
      startDevClusterFixture("v35"),
      localGreedyIds(modelDir),
      served,
    ]);
    await waitUntilServing(byHand.address, 60_000);
    int4Ids = await generateIds(byHand.address);
    await prepareServingNamespace(f, ns);
    operator = await startOperatorProcess(await f.operatorKubeconfig());
    const manifest = [
      "apiVersion: serving.tessera.dev/v1alpha1",
      "kind: InferenceModel",
      `metadata: {name: ${name}}`,
      "spec:",
      `  model: {path: ${modelDir}, numLayers: 12, quantization: int4}`,
      "  parallelism: {pipeline: 2}",
      "",
    ].join("\n");
    await f.ok("apply", "-n", ns, "-f", f.file("model.yaml", manifest));
  });
  after(async () => {
    byHand?.child.kill("SIGTERM");
    await byHand?.exited;
    operator?.child.kill("SIGTERM");
    await operator?.exited;
    await f?.close();
  });

  it("becomes Ready and answers through its router with tessera serve --quantization int4's tokens", async () => {
    // The model's int4 tokens are not its float ones: the answer below comes from quantized weights.
    assert.notDeepEqual(int4Ids, floatIds);
    await f.ok("wait", "-n", ns, "--for=condition=Ready", `inferencemodel/${name}`, "--timeout=240s");
    assert.deepEqual(await generateIds(await routerAddress()), int4Ids);
  });

  it("tells every worker of the group TESSERA_QUANTIZATION=int4", async () => {
    const list = JSON.parse(await f.ok("get", "pods", "-n", ns, "-o", "json")) as PodList;
    const workers = list.items.filter((p) => p.spec.subdomain === `${name}-workers`);
    assert.equal(workers.length, 2, workers.map((p) => p.metadata.name).join(", "));
    for (const pod of workers) {
      const env = pod.spec.containers[0]?.env ?? [];
      assert.equal(env.find((e) => e.name === "TESSERA_QUANTIZATION")?.value, "int4", pod.metadata.name);
    }
  });
});
