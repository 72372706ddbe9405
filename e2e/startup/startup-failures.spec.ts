// Start-up that fails loudly: a `tessera` process whose listener cannot start exits non-zero with one
// line naming the command, the address and the setting, instead of serving half started (the router
// used to keep serving gRPC when its HTTP port was taken). Each runs the real CLI as a child process.
import assert from "node:assert/strict";
import { once } from "node:events";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { runTessera } from "../../services/cli/child-process.ts";
import { tinyCheckpoint } from "../checkpoint.ts";

describe("start-up failures (e2e)", () => {
  let modelDir: string;
  let dir: string;
  let taken: net.Server;
  let port: number;
  before(async () => {
    modelDir = await tinyCheckpoint();
    dir = mkdtempSync(path.join(os.tmpdir(), "tessera-startup-"));
    taken = net.createServer().listen(0, "127.0.0.1");
    await once(taken, "listening");
    port = (taken.address() as net.AddressInfo).port;
  });
  after(() => {
    taken.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** Runs `tessera ...args` to its end; its last stderr line is the failure. */
  const fails = async (args: string[]) => {
    const run = await runTessera(args);
    assert.equal(run.code, 1, run.stderr);
    return run.stderr.trim().split("\n").at(-1);
  };

  it("a router whose HTTP port is taken exits 1 naming the port and its config field", async () => {
    const endpoints = path.join(dir, "endpoints.yaml");
    writeFileSync(endpoints, "endpoints: []\n");
    const config = {
      grpcPort: 0,
      httpPort: port,
      models: [{ id: "tiny", tokenizer: modelDir }],
      discovery: { type: "static", file: endpoints },
    };
    assert.equal(
      await fails(["router", "--config-json", JSON.stringify(config)]),
      `tessera router: cannot listen on 127.0.0.1:${port} (httpPort): address in use`,
    );
  });

  it("tessera serve exits 1 when its gRPC or metrics port is taken", async () => {
    assert.equal(
      await fails(["serve", "--model", modelDir, "--port", String(port)]),
      `tessera serve: cannot listen on 127.0.0.1:${port} (--port): address in use`,
    );
    assert.equal(
      await fails(["serve", "--model", modelDir, "--port", "0", "--metrics-port", String(port)]),
      `tessera serve: cannot listen on 127.0.0.1:${port} (--metrics-port): address in use`,
    );
  });

  it("tessera operator exits 1 when its health port is taken, listening on loopback by default", async () => {
    const kubeconfig = path.join(dir, "kubeconfig");
    writeFileSync(
      kubeconfig,
      `current-context: c
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
contexts: [{name: c, context: {cluster: c, namespace: default}}]
users: [{name: u, user: {}}]
`,
    );
    const args = ["operator", "--kubeconfig", kubeconfig, "--no-leader-elect", "--metrics-port", "0"];
    assert.equal(
      await fails([...args, "--health-port", String(port)]),
      `tessera operator: cannot listen on 127.0.0.1:${port} (--health-port): address in use`,
    );
  });
});
