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

  it("reads TESSERA_FRONT_TLS_CLIENT_AUTH as true or false, and refuses anything else", () => {
    const front = { frontDoor: { dir: "/f", clientAuth: false } };
    assert.equal(
      (withTlsFlags(front, {}, { TESSERA_FRONT_TLS_CLIENT_AUTH: "true" }) as typeof front).frontDoor
        .clientAuth,
      true,
    );
    assert.equal(
      (withTlsFlags(front, {}, { TESSERA_FRONT_TLS_CLIENT_AUTH: "false" }) as typeof front).frontDoor
        .clientAuth,
      false,
    );
    assert.match(
      String(withTlsFlags(front, {}, { TESSERA_FRONT_TLS_CLIENT_AUTH: "yes" })),
      /must be true or false, not "yes"/,
    );
  });

  it("refuses a switch that needs a folder no flag or config gives", () => {
    assert.match(String(withTlsFlags({}, { tlsServerName: "x" })), /--tls-server-name needs --tls-dir/);
    assert.match(
      String(withTlsFlags({}, { frontTlsClientAuth: true })),
      /--front-tls-client-auth needs --front-tls-dir/,
    );
  });
});
