import assert from "node:assert/strict";
import http from "node:http";
import type { AddressInfo } from "node:net";
import net from "node:net";
import os from "node:os";
import { Server, ServerCredentials } from "@grpc/grpc-js";
import { HealthImplementation } from "grpc-health-check";
import { checkProbe, type ProbeTarget } from "./probe-check.ts";

const HOST = "127.0.0.1";
const target = (ports: ProbeTarget["ports"] = []): ProbeTarget => ({
  podIP: HOST,
  ports,
  env: { PATH: process.env["PATH"] ?? "" },
  cwd: os.tmpdir(),
});

async function listen(server: http.Server | net.Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, HOST, resolve));
  return (server.address() as AddressInfo).port;
}

describe("probe-check", () => {
  it("httpGet passes on 2xx/3xx, fails on other codes and when nothing listens; named ports resolve", async () => {
    const server = http.createServer((req, res) => {
      res.statusCode = req.url === "/ok" ? 200 : req.url === "/moved" ? 302 : 500;
      res.end(req.headers["x-probe"] ?? "");
    });
    const port = await listen(server);
    try {
      const ports = [{ name: "http", containerPort: port }];
      assert.deepEqual(await checkProbe({ httpGet: { port: "http", path: "/ok" } }, target(ports)), {
        ok: true,
        message: "",
      });
      assert.equal((await checkProbe({ httpGet: { port, path: "/moved" } }, target())).ok, true);
      assert.deepEqual(await checkProbe({ httpGet: { port, path: "/bad" } }, target()), {
        ok: false,
        message: "HTTP probe failed with statuscode: 500",
      });
    } finally {
      server.close();
    }
    const refused = await checkProbe({ httpGet: { port, path: "/ok" } }, target());
    assert.equal(refused.ok, false);
    assert.match(refused.message, new RegExp(`Get "http://${HOST}:${port}/ok": .*ECONNREFUSED`));
    assert.equal((await checkProbe({ httpGet: { port: "nope" } }, target())).ok, false);
  });

  it("tcpSocket passes when the port accepts a connection", async () => {
    const server = net.createServer((socket) => socket.destroy());
    const port = await listen(server);
    assert.equal((await checkProbe({ tcpSocket: { port } }, target())).ok, true);
    server.close();
    const refused = await checkProbe({ tcpSocket: { port } }, target());
    assert.match(refused.message, new RegExp(`dial tcp ${HOST}:${port}: `));
  });

  it("grpc asks grpc.health.v1 and passes only on SERVING", async () => {
    const health = new HealthImplementation({ "": "SERVING", slow: "NOT_SERVING" });
    const server = new Server();
    health.addToServer(server);
    const port = await new Promise<number>((resolve, reject) =>
      server.bindAsync(`${HOST}:0`, ServerCredentials.createInsecure(), (err, p) =>
        err ? reject(err) : resolve(p),
      ),
    );
    try {
      assert.equal((await checkProbe({ grpc: { port } }, target())).ok, true);
      assert.deepEqual(await checkProbe({ grpc: { port, service: "slow" } }, target()), {
        ok: false,
        message: 'service unhealthy (responded with "NOT_SERVING")',
      });
    } finally {
      server.forceShutdown();
    }
  });

  it("exec passes when the command exits 0 and reports its output otherwise", async () => {
    const node = process.execPath;
    assert.equal((await checkProbe({ exec: { command: [node, "-e", "0"] } }, target())).ok, true);
    const failed = await checkProbe(
      { exec: { command: [node, "-e", "console.log('not yet'); process.exit(2)"] } },
      target(),
    );
    assert.equal(failed.ok, false);
    assert.match(failed.message, /exited with 2: not yet$/);
    const mapped = { ...target(), mapPath: (p: string) => (p === "/mounted/node" ? node : p) };
    assert.equal((await checkProbe({ exec: { command: ["/mounted/node", "-e", "0"] } }, mapped)).ok, true);
  });
});
