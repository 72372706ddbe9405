import assert from "node:assert/strict";
import path from "node:path";
import { withTlsFlags } from "./router-command.ts";

describe("tessera router TLS flags", () => {
  it("put --tls-dir and --front-tls-dir over the config's tls section, resolved from the working directory", () => {
    const tls = withTlsFlags({}, { tlsDir: "w", frontTlsDir: "/f", frontTlsClientAuth: true });
    assert.deepEqual(tls, {
      workers: { dir: path.resolve("w") },
      frontDoor: { dir: "/f", clientAuth: true },
    });
    assert.deepEqual(withTlsFlags({ workers: { dir: "/c" } }, { tlsServerName: "w.ns.svc" }), {
      workers: { dir: "/c", serverName: "w.ns.svc" },
    });
  });

  it("refuses a switch that needs a folder no flag or config gives", () => {
    assert.match(String(withTlsFlags({}, { tlsServerName: "x" })), /--tls-server-name needs --tls-dir/);
    assert.match(
      String(withTlsFlags({}, { frontTlsClientAuth: true })),
      /--front-tls-client-auth needs --front-tls-dir/,
    );
  });
});
