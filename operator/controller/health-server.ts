// Liveness and readiness over HTTP: GET /healthz answers 200 while the process runs; GET /readyz
// answers 200 once the operator is ready (informer caches synced, or waiting as a standby for the
// lease) and 503 with the reason otherwise.
import http from "node:http";

export interface HealthSource {
  /** undefined when ready, else why not. */
  notReady(): string | undefined;
}

export async function serveHealth(port: number, host: string, source: HealthSource): Promise<http.Server> {
  const server = http.createServer((req, res) => {
    const path = req.url?.split("?")[0];
    res.setHeader("content-type", "text/plain");
    if (req.method === "GET" && path === "/healthz") {
      res.end("ok\n");
      return;
    }
    if (req.method === "GET" && path === "/readyz") {
      const reason = source.notReady();
      res.statusCode = reason === undefined ? 200 : 503;
      res.end(reason === undefined ? "ok\n" : `not ready: ${reason}\n`);
      return;
    }
    res.statusCode = 404;
    res.end("not found: /healthz, /readyz\n");
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => resolve());
  });
  return server;
}
