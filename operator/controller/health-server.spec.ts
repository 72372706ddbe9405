import assert from "node:assert/strict";
import { listeningPort } from "../../services/kernel/telemetry/metrics.ts";
import { serveHealth } from "./health-server.ts";

describe("health server", () => {
  it("answers liveness always and readiness once ready", async () => {
    let reason: string | undefined = "informers not synced";
    const server = await serveHealth(0, "127.0.0.1", { notReady: () => reason });
    const url = (path: string) => `http://127.0.0.1:${listeningPort(server)}${path}`;
    try {
      assert.equal((await fetch(url("/healthz"))).status, 200);
      const notReady = await fetch(url("/readyz"));
      assert.deepEqual([notReady.status, await notReady.text()], [503, "not ready: informers not synced\n"]);
      reason = undefined;
      assert.equal((await fetch(url("/readyz"))).status, 200);
      assert.equal((await fetch(url("/other"))).status, 404);
    } finally {
      server.close();
    }
  });
});
