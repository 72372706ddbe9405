import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import tls from "node:tls";
import { credentials, Server, status } from "@grpc/grpc-js";
import { HealthImplementation } from "grpc-health-check";
import { PLAINTEXT } from "./grpc-client.ts";
import { bind } from "./grpc-listen.ts";
import { checkHealth } from "./health-client.ts";
import { type Pem, secretFiles, testCa, testLeaf, writeSecretVolume } from "./testing/test-pki.ts";
import { clientSecurity, serverCredentials } from "./tls-credentials.ts";
import { TlsFolder } from "./tls-folder.ts";

/** The serial of the certificate a new TLS connection to `port` is shown (presenting `client`). */
function serialOnNewConnection(port: number, ca: Pem, client: Pem): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = tls.connect(
      { host: "127.0.0.1", port, ca: ca.cert, ...client, ALPNProtocols: ["h2"] },
      () => {
        resolve(socket.getPeerCertificate().serialNumber);
        socket.destroy();
      },
    );
    socket.on("error", reject);
  });
}

describe("gRPC over mutual TLS from Secret-style folders", () => {
  const root = mkdtempSync(path.join(tmpdir(), "tessera-tls-"));
  const folders: TlsFolder[] = [];
  let ca: Pem;
  let server: Server;
  let port: number;
  let serverFolder: TlsFolder;
  let clientFolder: TlsFolder;
  let clientLeaf: Pem;
  const address = () => `127.0.0.1:${port}`;
  const open = (name: string, needCa = true) => {
    const folder = TlsFolder.open(path.join(root, name), { needCa });
    folders.push(folder);
    return folder;
  };

  before(async () => {
    ca = await testCa();
    clientLeaf = await testLeaf(ca, "router");
    writeSecretVolume(path.join(root, "server"), secretFiles(await testLeaf(ca, "worker"), ca));
    writeSecretVolume(path.join(root, "client"), secretFiles(clientLeaf, ca));
    serverFolder = open("server");
    clientFolder = open("client");
    server = new Server();
    new HealthImplementation({ "": "SERVING" }).addToServer(server);
    port = await bind(server, "127.0.0.1", 0, { credentials: serverCredentials(serverFolder) });
  });
  after(() => {
    server?.forceShutdown();
    for (const f of folders) f.close();
    rmSync(root, { recursive: true, force: true });
  });

  it("serves a client that presents a certificate from the CA", async () => {
    assert.equal(await checkHealth(address(), "", 5_000, clientSecurity(clientFolder)), "SERVING");
  });

  it("verifies the server under the configured name when it is not the host dialled", async () => {
    writeSecretVolume(
      path.join(root, "named"),
      secretFiles(await testLeaf(ca, "svc", ["workers.ns.svc"]), ca),
    );
    const named = new Server();
    new HealthImplementation({ "": "SERVING" }).addToServer(named);
    const namedPort = await bind(named, "127.0.0.1", 0, { credentials: serverCredentials(open("named")) });
    try {
      const security = clientSecurity(clientFolder, "workers.ns.svc");
      assert.equal(await checkHealth(`127.0.0.1:${namedPort}`, "", 5_000, security), "SERVING");
      await assert.rejects(
        checkHealth(`127.0.0.1:${namedPort}`, "", 5_000, clientSecurity(clientFolder, "other.ns.svc")),
      );
    } finally {
      named.forceShutdown();
    }
  });

  it("refuses a client without a certificate, and a plaintext one", async () => {
    const noCert = { credentials: credentials.createSsl(Buffer.from(ca.cert)), options: {} };
    await assert.rejects(checkHealth(address(), "", 5_000, noCert), { code: status.UNAVAILABLE });
    await assert.rejects(checkHealth(address(), "", 5_000, PLAINTEXT), { code: status.UNAVAILABLE });
  });

  it("refuses a client whose certificate another CA signed, and a client refuses a server it cannot verify", async () => {
    const otherCa = await testCa("other-ca");
    writeSecretVolume(path.join(root, "stranger"), secretFiles(await testLeaf(otherCa, "stranger"), otherCa));
    const stranger = open("stranger");
    // The stranger trusts only its own CA: it refuses our server; with our CA trusted, our server refuses it.
    await assert.rejects(checkHealth(address(), "", 5_000, clientSecurity(stranger)), {
      code: status.UNAVAILABLE,
    });
    const leaf = await testLeaf(otherCa, "stranger");
    const trustsOurCa = credentials.createSsl(
      Buffer.from(ca.cert),
      Buffer.from(leaf.key),
      Buffer.from(leaf.cert),
    );
    await assert.rejects(checkHealth(address(), "", 5_000, { credentials: trustsOurCa, options: {} }), {
      code: status.UNAVAILABLE,
    });
  });

  it("picks up a rotated certificate for new connections without a restart", async () => {
    const before = await serialOnNewConnection(port, ca, clientLeaf);
    assert.equal(before, serverFolder.current.serial);
    const rotated = await testLeaf(ca, "worker");
    const reloaded = new Promise<string>((resolve) => serverFolder.onReload((m) => resolve(m.serial)));
    writeSecretVolume(path.join(root, "server"), secretFiles(rotated, ca));
    const serial = await reloaded;
    assert.notEqual(serial, before);
    assert.equal(await serialOnNewConnection(port, ca, clientLeaf), serial);
    assert.equal(await checkHealth(address(), "", 5_000, clientSecurity(clientFolder)), "SERVING");
  });
});
