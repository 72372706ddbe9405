import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { createLogger } from "../../services/kernel/log.ts";
import { secretFiles, testCa, testLeaf, writeSecretVolume } from "../../services/rpc/testing/test-pki.ts";
import { serverCredentials } from "../../services/rpc/tls-credentials.ts";
import { TlsFolder } from "../../services/rpc/tls-folder.ts";
import { FakeModel } from "../../services/worker/server/fake-served-model.ts";
import { InferenceServer } from "../../services/worker/server/inference-server.ts";
import { GrpcWorkerModels } from "./worker-models.ts";

describe("the served-name check on workers that serve mutual TLS", () => {
  const root = mkdtempSync(path.join(tmpdir(), "tessera-operator-tls-"));
  const folders: TlsFolder[] = [];
  let worker: InferenceServer;
  let endpoint: string;

  before(async () => {
    const ca = await testCa();
    writeSecretVolume(path.join(root, "worker"), secretFiles(await testLeaf(ca, "worker", ["w.ns.svc"]), ca));
    writeSecretVolume(path.join(root, "operator"), secretFiles(await testLeaf(ca, "operator"), ca));
    for (const name of ["worker", "operator"])
      folders.push(TlsFolder.open(path.join(root, name), { needCa: true }));
    worker = await InferenceServer.start(new FakeModel(), {
      host: "127.0.0.1",
      port: 0,
      drainTimeoutMs: 0,
      log: createLogger("test", "silent"),
      credentials: serverCredentials(folders[0]),
    });
    endpoint = `127.0.0.1:${worker.port}`;
  });
  after(async () => {
    await worker?.shutdown();
    for (const f of folders) f.close();
    rmSync(root, { recursive: true, force: true });
  });

  it("asks with the operator's certificate, checking the model's server name", async () => {
    const models = new GrpcWorkerModels({ tls: folders[1]! });
    const pod = { namespace: "ns", name: "w-0", endpoint };
    assert.deepEqual(await models.servedNames({ ...pod, tls: { serverName: "w.ns.svc" } }), ["fake"]);
    await assert.rejects(models.servedNames(pod), { code: 14 }, "plaintext to a TLS worker fails");
  });

  it("says which flag is missing when the operator has no certificate", async () => {
    await assert.rejects(
      new GrpcWorkerModels().servedNames({ namespace: "ns", name: "w-0", endpoint, tls: {} }),
      /serves mutual TLS \(spec\.tls\): give the operator a certificate \(--tls-dir/,
    );
  });
});
