// The served name end to end on the dev cluster with kubectl, a real `tessera operator` and real
// `tessera serve` workers, on a checkpoint whose folder is not named like the model (real folders are
// named Qwen2.5-0.5B-Instruct; users name their models what they like). The workers serve the name the
// operator gives them (TESSERA_MODEL_NAME), so a request through the router by that name is served as
// soon as `kubectl wait --for=condition=Ready` returns: for a model named q2 split into 2 pipeline
// stages (every shard told the name), and for one whose spec.model.servedName says another name. The
// router lists the name at /v1/models and refuses the folder's name. (The operator's ServedNameMismatch
// condition, for workers that serve another name, is in operator/operator.spec.ts: a real worker always
// serves what it is told.)
import assert from "node:assert/strict";
import { cpSync, mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { tinyCheckpoint } from "../checkpoint.ts";
import { type DevClusterFixture, httpGet, startDevClusterFixture } from "../devcluster/kubelet-fixture.ts";
import { generateIds, localGreedyIds } from "./generate-client.ts";
import { type OperatorProcess, startOperatorProcess } from "./operator-process.ts";
import { prepareServingNamespace } from "./serving-namespace.ts";

const FOLDER = "TinyLlama-0.1B-Instruct";

interface EndpointSlices {
  items: {
    endpoints?: { addresses: string[]; conditions?: { ready?: boolean } }[];
    ports?: { name?: string; port?: number }[];
  }[];
}

describe("served names on the dev cluster: what the user names the model, not its folder (e2e)", function () {
  this.timeout(180_000);
  let f: DevClusterFixture;
  let operator: OperatorProcess;
  let expected: number[];
  let scratch: string;
  const ns = "served-name";

  /** host:port of a ready router pod of `model` for `port` (grpc or http), from its Service's EndpointSlices. */
  const routerAddress = async (model: string, port: "grpc" | "http"): Promise<string> => {
    const label = `kubernetes.io/service-name=${model}-router`;
    const slices = JSON.parse(
      await f.ok("get", "endpointslices", "-n", ns, "-l", label, "-o", "json"),
    ) as EndpointSlices;
    for (const slice of slices.items) {
      const number = slice.ports?.find((p) => p.name === port)?.port;
      const ready = slice.endpoints?.find((e) => e.conditions?.ready === true && e.addresses[0]);
      if (number && ready) return `${ready.addresses[0]}:${number}`;
    }
    throw new Error(`no ready ${model}-router endpoint: ${JSON.stringify(slices)}`);
  };
  const listedModels = async (model: string): Promise<string[]> => {
    const [ip = "", port] = (await routerAddress(model, "http")).split(":");
    const body = JSON.parse(await httpGet(ip, Number(port), "/v1/models")) as { data: { id: string }[] };
    return body.data.map((m) => m.id);
  };
  const servedName = (model: string) =>
    f.ok("get", "inferencemodel", model, "-n", ns, "-o", "jsonpath={.status.servedName}");

  before(async () => {
    const tiny = await tinyCheckpoint();
    scratch = mkdtempSync(path.join(os.tmpdir(), "tessera-served-name-"));
    const modelDir = path.join(scratch, FOLDER);
    cpSync(tiny, modelDir, { recursive: true });
    [f, expected] = await Promise.all([startDevClusterFixture("v35"), localGreedyIds(modelDir)]);
    await prepareServingNamespace(f, ns);
    operator = await startOperatorProcess(await f.operatorKubeconfig());
    // Both models at once: the two come up side by side.
    const models = [
      "apiVersion: serving.tessera.dev/v1alpha1",
      "kind: InferenceModel",
      "metadata: {name: q2}",
      "spec:",
      `  model: {path: ${modelDir}, numLayers: 2}`,
      "  parallelism: {pipeline: 2}",
      "---",
      "apiVersion: serving.tessera.dev/v1alpha1",
      "kind: InferenceModel",
      "metadata: {name: chat}",
      "spec:",
      `  model: {path: ${modelDir}, servedName: Qwen/Qwen2.5-0.5B-Instruct}`,
      "",
    ].join("\n");
    await f.ok("apply", "-n", ns, "-f", f.file("models.yaml", models));
  });
  after(async () => {
    operator?.child.kill("SIGTERM");
    await operator?.exited;
    await f?.close();
    if (scratch) rmSync(scratch, { recursive: true, force: true });
  });

  it("serves q2 (2 pipeline stages, folder TinyLlama-...) through its router by its name once Ready", async () => {
    await f.ok("wait", "-n", ns, "--for=condition=Ready", "inferencemodel/q2", "--timeout=120s");
    const router = await routerAddress("q2", "grpc");
    assert.deepEqual(await generateIds(router, { model: "q2" }), expected);
    assert.equal(await servedName("q2"), "q2");
    assert.deepEqual(await listedModels("q2"), ["q2"]);
    await assert.rejects(
      generateIds(router, { model: FOLDER }),
      (err: { code?: number; details?: string }) => {
        assert.equal(err.code, 5, err.details); // NOT_FOUND
        assert.match(err.details ?? "", /model "TinyLlama-0\.1B-Instruct" is not served here \(serving q2\)/);
        return true;
      },
    );
  });

  it("serves spec.model.servedName when set: the router lists it, requests by it are served", async () => {
    await f.ok("wait", "-n", ns, "--for=condition=Ready", "inferencemodel/chat", "--timeout=120s");
    const router = await routerAddress("chat", "grpc");
    assert.deepEqual(await generateIds(router, { model: "Qwen/Qwen2.5-0.5B-Instruct" }), expected);
    assert.equal(await servedName("chat"), "Qwen/Qwen2.5-0.5B-Instruct");
    assert.deepEqual(await listedModels("chat"), ["Qwen/Qwen2.5-0.5B-Instruct"]);
    const columns = await f.ok("get", "inferencemodel", "chat", "-n", ns);
    assert.match(columns, /Qwen\/Qwen2\.5-0\.5B-Instruct/, columns);
  });
});
