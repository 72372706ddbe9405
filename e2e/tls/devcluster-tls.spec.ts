// TLS on the dev cluster, end to end, as a user turns it on: a CA and a leaf made in the test are put in
// a kubernetes.io/tls Secret (tls.crt, tls.key, ca.crt: cert-manager's layout) with the real kubectl, an
// InferenceModel split into 2 pipeline stages names it in spec.tls, and a real `tessera operator` under
// its own RBAC (with its own certificate from the same CA, --tls-dir) brings it to Ready. Ready means
// the operator's served-name check reached the entry worker over mutual TLS (without --tls-dir it could
// not ask, and the model would stay ServedNameUnknown). Then: a request through the router gives the
// same ids as `tessera generate` on the host (router -> stage 0 -> stage 1, all over mutual TLS); a
// plaintext client is refused by a worker's port; and a rotated Secret (a new leaf from the same CA) is
// projected by the kubelet and picked up by every worker without a restart: a new connection is shown
// the new certificate's serial, the pods keep their uid and restart count, and requests keep working.
import assert from "node:assert/strict";
import { X509Certificate } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import tls from "node:tls";
import { LABELS, WORKER_APP, WORKER_GRPC_PORT } from "../../services/api/group.ts";
import {
  type Pem,
  secretFiles,
  testCa,
  testLeaf,
  writeSecretVolume,
} from "../../services/rpc/testing/test-pki.ts";
import { tinyCheckpoint } from "../checkpoint.ts";
import { type DevClusterFixture, eventually, startDevClusterFixture } from "../devcluster/kubelet-fixture.ts";
import { generateIds, localGreedyIds } from "../operator/generate-client.ts";
import { type OperatorProcess, startOperatorProcess } from "../operator/operator-process.ts";
import { prepareServingNamespace } from "../operator/serving-namespace.ts";

const NS = "tls-e2e";
const MODEL = "q2";
const SECRET = "q2-tls";
/** The name the workers' certificates carry (spec.tls.serverName): they are dialled by pod IP. */
const SERVER_NAME = `${MODEL}-workers.${NS}.svc`;

interface PodList {
  items: {
    metadata: { name: string; uid: string; labels: Record<string, string> };
    status: { podIP?: string; containerStatuses?: { restartCount: number }[] };
  }[];
}
interface EndpointSlices {
  items: {
    endpoints?: { addresses: string[]; conditions?: { ready?: boolean } }[];
    ports?: { name?: string; port?: number }[];
  }[];
}

const serialOf = (pem: Pem) => new X509Certificate(pem.cert).serialNumber;

/** The serial of the certificate a new mutual-TLS connection to `ip` is shown (verified against the CA). */
function serialAt(ip: string, ca: Pem, client: Pem): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = tls.connect(
      {
        host: ip,
        port: WORKER_GRPC_PORT,
        ca: ca.cert,
        cert: client.cert,
        key: client.key,
        servername: SERVER_NAME,
      },
      () => {
        resolve(socket.getPeerCertificate().serialNumber);
        socket.destroy();
      },
    );
    socket.on("error", reject);
  });
}

const secretYaml = (leaf: Pem, ca: Pem) => {
  const b64 = (text: string) => Buffer.from(text).toString("base64");
  return [
    "apiVersion: v1",
    "kind: Secret",
    `metadata: {name: ${SECRET}}`,
    "type: kubernetes.io/tls",
    "data:",
    `  tls.crt: ${b64(leaf.cert)}`,
    `  tls.key: ${b64(leaf.key)}`,
    `  ca.crt: ${b64(ca.cert)}`,
    "",
  ].join("\n");
};

describe("TLS between router, workers and shards on the dev cluster (e2e)", function () {
  this.timeout(180_000);
  let f: DevClusterFixture;
  let operator: OperatorProcess;
  let expected: number[];
  let scratch: string;
  let ca: Pem;
  let client: Pem;

  const workers = async () =>
    (
      JSON.parse(
        await f.ok(
          "get",
          "pods",
          "-n",
          NS,
          "-l",
          `${LABELS.name}=${WORKER_APP},${LABELS.model}=${MODEL}`,
          "-o",
          "json",
        ),
      ) as PodList
    ).items;
  const routerGrpc = async (): Promise<string> => {
    const slices = JSON.parse(
      await f.ok(
        "get",
        "endpointslices",
        "-n",
        NS,
        "-l",
        `kubernetes.io/service-name=${MODEL}-router`,
        "-o",
        "json",
      ),
    ) as EndpointSlices;
    for (const slice of slices.items) {
      const port = slice.ports?.find((p) => p.name === "grpc")?.port;
      const ready = slice.endpoints?.find((e) => e.conditions?.ready === true && e.addresses[0]);
      if (port && ready) return `${ready.addresses[0]}:${port}`;
    }
    throw new Error(`no ready ${MODEL}-router endpoint: ${JSON.stringify(slices)}`);
  };

  before(async () => {
    scratch = mkdtempSync(path.join(os.tmpdir(), "tessera-devcluster-tls-"));
    const tiny = await tinyCheckpoint();
    ca = await testCa();
    const [fixture, ids, leaf, operatorLeaf, clientLeaf] = await Promise.all([
      startDevClusterFixture("v35"),
      localGreedyIds(tiny),
      testLeaf(ca, "tessera-worker", [SERVER_NAME]),
      testLeaf(ca, "tessera-operator"),
      testLeaf(ca, "test-client"),
    ]);
    [f, expected, client] = [fixture, ids, clientLeaf];
    await prepareServingNamespace(f, NS);
    await f.ok("apply", "-n", NS, "-f", f.file("secret.yaml", secretYaml(leaf, ca)));
    // The operator's own certificate, as its Deployment mounts operator.tls.secretName.
    const operatorTls = path.join(scratch, "operator-tls");
    writeSecretVolume(operatorTls, secretFiles(operatorLeaf, ca));
    operator = await startOperatorProcess(await f.operatorKubeconfig(), ["--tls-dir", operatorTls]);
    const model = [
      "apiVersion: serving.tessera.dev/v1alpha1",
      "kind: InferenceModel",
      `metadata: {name: ${MODEL}}`,
      "spec:",
      `  model: {path: ${tiny}, numLayers: 2}`,
      "  parallelism: {pipeline: 2}",
      `  tls: {secretName: ${SECRET}, serverName: ${SERVER_NAME}}`,
      "",
    ].join("\n");
    await f.ok("apply", "-n", NS, "-f", f.file("model.yaml", model));
  });
  after(async () => {
    operator?.child.kill("SIGTERM");
    await operator?.exited;
    await f?.close();
    if (scratch) rmSync(scratch, { recursive: true, force: true });
  });

  it("is Ready (the operator asked the mTLS entry worker its served name) and serves the host's ids through the router", async () => {
    await f.ok("wait", "-n", NS, "--for=condition=Ready", `inferencemodel/${MODEL}`, "--timeout=120s");
    assert.equal(
      await f.ok("get", "inferencemodel", MODEL, "-n", NS, "-o", "jsonpath={.status.servedName}"),
      MODEL,
    );
    assert.deepEqual(await generateIds(await routerGrpc(), { model: MODEL }), expected);
  });

  it("serves TLS on every shard's port: the Secret's certificate, and a plaintext client is refused", async () => {
    const pods = await workers();
    assert.deepEqual(pods.map((p) => p.metadata.labels[LABELS.stage]).sort(), ["0", "1"]);
    for (const pod of pods) {
      const ip = pod.status.podIP ?? "";
      assert.equal(await serialAt(ip, ca, client), serialOf(await leafOf(SECRET)), pod.metadata.name);
    }
    const entry = pods.find((p) => p.metadata.labels[LABELS.stage] === "0")!;
    await assert.rejects(
      generateIds(`${entry.status.podIP}:${WORKER_GRPC_PORT}`),
      (err: { code?: number }) => {
        assert.equal(err.code, 14, String(err)); // UNAVAILABLE: no gRPC over plaintext
        return true;
      },
    );
  });

  it("takes a rotated Secret (new leaf, same CA) without restarting a pod: new connections see the new serial", async () => {
    const before = await workers();
    const rotated = await testLeaf(ca, "tessera-worker-rotated", [SERVER_NAME]);
    await f.ok("apply", "-n", NS, "-f", f.file("secret-rotated.yaml", secretYaml(rotated, ca)));
    for (const pod of before) {
      await eventually(
        `${pod.metadata.name} to show the rotated certificate`,
        async () => (await serialAt(pod.status.podIP ?? "", ca, client)) === serialOf(rotated),
        20_000,
      );
    }
    const after = await workers();
    const identity = (pods: PodList["items"]) =>
      pods
        .map((p) => `${p.metadata.name}/${p.metadata.uid}/${p.status.containerStatuses?.[0]?.restartCount}`)
        .sort();
    assert.deepEqual(identity(after), identity(before));
    // Router -> stage 0 -> stage 1 on new connections under the new certificate.
    assert.deepEqual(await generateIds(await routerGrpc(), { model: MODEL }), expected);
  });

  /** The leaf in the Secret now, read back through kubectl. */
  async function leafOf(name: string): Promise<Pem> {
    const b64 = await f.ok("get", "secret", name, "-n", NS, "-o", "jsonpath={.data.tls\\.crt}");
    return { cert: Buffer.from(b64, "base64").toString("utf8"), key: "" };
  }
});
