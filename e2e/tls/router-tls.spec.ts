// The router over TLS, in one process: a worker's gRPC server (a fake model) that accepts only mutual
// TLS, the router presenting its own certificate to it, and the router's front door on TLS: gRPC with
// a client that trusts the CA, HTTPS with Node's fetch once the CA is trusted (as NODE_EXTRA_CA_CERTS
// would), a Secret rotated under the front door seen by the next connection, and a bad Secret refused
// at start naming its field, flag and file.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import https from "node:https";
import { tmpdir } from "node:os";
import path from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import tls from "node:tls";
import { credentials } from "@grpc/grpc-js";
import { Inference } from "../../proto/gen/tessera/v1/inference_pb.js";
import { createLogger } from "../../services/kernel/log.ts";
import { parseRouterConfig } from "../../services/router/config/router-config.ts";
import { type RunningRouter, startRouter } from "../../services/router/start-router.ts";
import { GrpcClient } from "../../services/rpc/grpc-client.ts";
import {
  type Pem,
  secretFiles,
  testCa,
  testLeaf,
  writeSecretVolume,
} from "../../services/rpc/testing/test-pki.ts";
import { serverCredentials } from "../../services/rpc/tls-credentials.ts";
import { TlsFolder } from "../../services/rpc/tls-folder.ts";
import { FakeModel } from "../../services/worker/server/fake-served-model.ts";
import { InferenceServer } from "../../services/worker/server/inference-server.ts";
import { tinyCheckpoint } from "../checkpoint.ts";
import { generate } from "../router/grpc-stream.ts";

const log = createLogger("test", "silent");

/** The serial of the certificate a new TLS connection to `port` is shown. */
function serialAt(port: number, ca: Pem): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = tls.connect({ host: "127.0.0.1", port, ca: ca.cert, servername: "localhost" }, () => {
      resolve(socket.getPeerCertificate().serialNumber);
      socket.destroy();
    });
    socket.on("error", reject);
  });
}

describe("router over TLS: mutual TLS to workers, TLS front door (e2e)", () => {
  const root = mkdtempSync(path.join(tmpdir(), "tessera-router-tls-"));
  const dir = (name: string) => path.join(root, name);
  let ca: Pem;
  let workerFolder: TlsFolder;
  let worker: InferenceServer;
  let router: RunningRouter;
  let tokenizer: string;

  const config = (extra: Record<string, unknown>) => {
    const parsed = parseRouterConfig(
      {
        grpcPort: 0,
        httpPort: 0,
        drainTimeoutMs: 500,
        models: [{ id: "fake", tokenizer }],
        discovery: { type: "static", file: dir("endpoints.json"), pollMs: 0 },
        ...extra,
      },
      root,
    );
    if (parsed.error) throw parsed.error;
    return parsed.value;
  };

  before(async () => {
    tokenizer = await tinyCheckpoint();
    ca = await testCa();
    writeSecretVolume(dir("worker"), secretFiles(await testLeaf(ca, "worker"), ca));
    writeSecretVolume(dir("router"), secretFiles(await testLeaf(ca, "router"), ca));
    writeSecretVolume(dir("front"), secretFiles(await testLeaf(ca, "front"), ca));
    workerFolder = TlsFolder.open(dir("worker"), { needCa: true });
    worker = await InferenceServer.start(new FakeModel(), {
      host: "127.0.0.1",
      port: 0,
      drainTimeoutMs: 0,
      log,
      credentials: serverCredentials(workerFolder),
    });
    const address = `127.0.0.1:${worker.port}`;
    writeFileSync(dir("endpoints.json"), JSON.stringify({ endpoints: [{ name: "w0", address }] }));
    router = await startRouter(
      config({ tls: { workers: { dir: "router" }, frontDoor: { dir: "front", clientAuth: false } } }),
      log,
    );
    while (!router.ready()) await delay(20);
  });

  after(async () => {
    await router?.stop(0);
    await worker?.shutdown();
    workerFolder?.close();
    rmSync(root, { recursive: true, force: true });
  });

  it("routes a gRPC request to the worker over mutual TLS, behind a TLS front door", async () => {
    const client = new GrpcClient(
      `127.0.0.1:${router.grpcPort}`,
      {},
      {
        credentials: credentials.createSsl(Buffer.from(ca.cert)),
        options: {},
      },
    );
    try {
      const [model] = (await client.unary(Inference.method.listModels, {})).models;
      assert.equal(model?.id, "fake");
      const routed = await generate(client, {
        model: "fake",
        prompt: { case: "tokenIds", value: { ids: [1, 2, 3] } },
        sampling: { maxTokens: 4, ignoreEos: true },
      });
      assert.equal(routed.error, undefined);
      assert.deepEqual(
        routed.messages.flatMap((m) => m.tokens.map((t) => t.tokenId)),
        [4, 5, 6, 7],
      );
    } finally {
      client.close();
    }
  });

  it("serves HTTPS that Node's fetch accepts once the CA is trusted, and refuses plaintext gRPC", async () => {
    const url = `https://localhost:${router.httpPort}/v1/models`;
    await assert.rejects(fetch(url), (err: Error) => /certificate/.test(String(err.cause)));
    const defaults = tls.getCACertificates("default");
    tls.setDefaultCACertificates([...defaults, ca.cert]);
    try {
      const res = await fetch(url);
      assert.equal(res.status, 200);
      const body = (await res.json()) as { data: { id: string }[] };
      assert.deepEqual(
        body.data.map((m) => m.id),
        ["fake"],
      );
    } finally {
      tls.setDefaultCACertificates(defaults);
    }
    const plain = new GrpcClient(`127.0.0.1:${router.grpcPort}`);
    try {
      await assert.rejects(plain.unary(Inference.method.listModels, {}), { code: 14 });
    } finally {
      plain.close();
    }
  });

  it("shows a new connection the front door's rotated certificate, without a restart", async () => {
    const before = await serialAt(router.httpPort, ca);
    writeSecretVolume(dir("front"), secretFiles(await testLeaf(ca, "front"), ca));
    let now = before;
    while (now === before) {
      await delay(20);
      now = await serialAt(router.httpPort, ca);
    }
    assert.equal(await serialAt(router.grpcPort, ca), now, "the gRPC front door rotated too");
  });

  it("with clientAuth, serves only front door clients that present a certificate the CA signed", async () => {
    const mutual = await startRouter(
      config({ tls: { workers: { dir: "router" }, frontDoor: { dir: "front", clientAuth: true } } }),
      log,
    );
    const get = (client?: Pem) =>
      new Promise<number>((resolve, reject) => {
        const req = https.get(
          {
            host: "127.0.0.1",
            servername: "localhost",
            port: mutual.httpPort,
            path: "/health",
            ca: ca.cert,
            ...client,
          },
          (res) => {
            res.resume();
            resolve(res.statusCode ?? 0);
          },
        );
        req.on("error", reject);
      });
    try {
      assert.equal(await get(await testLeaf(ca, "client")), 200);
      await assert.rejects(get(), /certificate required|socket hang up|ECONNRESET/);
    } finally {
      await mutual.stop(0);
    }
  });

  it("refuses to start with a front door Secret that lacks its key, naming the field, flag and file", async () => {
    writeSecretVolume(dir("broken"), { "tls.crt": (await testLeaf(ca)).cert, "ca.crt": ca.cert });
    await assert.rejects(
      startRouter(config({ grpcPort: 0, tls: { frontDoor: { dir: "broken" } } }), log),
      /tls\.frontDoor\.dir \(--front-tls-dir\): TLS folder .*broken: tls\.key is missing/,
    );
  });
});
