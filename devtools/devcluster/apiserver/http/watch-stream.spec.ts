import assert from "node:assert/strict";
import { request } from "node:https";
import { createLogger } from "../../../../services/kernel/log.ts";
import { ManualClock } from "../../../../services/kernel/manual-clock.ts";
import { type ApiServer, startApiServer } from "../api-server.ts";

/** Opens a watch and collects its lines; resolves `ended` when the server closes the stream. */
function openWatch(server: ApiServer, path: string) {
  const url = new URL(server.url);
  const lines: string[] = [];
  let buffer = "";
  return new Promise<{ lines: string[]; ended: Promise<void> }>((resolve, reject) => {
    const credentials = { ca: server.caCert, cert: server.admin.cert, key: server.admin.key };
    request({ host: url.hostname, port: url.port, path, ...credentials }, (res) => {
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => {
        buffer += chunk;
        const parts = buffer.split("\n");
        buffer = parts.pop() ?? "";
        lines.push(...parts);
      });
      resolve({ lines, ended: new Promise((done) => res.on("end", done)) });
    })
      .on("error", reject)
      .end();
  });
}

const until = async (check: () => boolean) => {
  for (let i = 0; i < 200 && !check(); i++) await new Promise((resolve) => setTimeout(resolve, 5));
};

describe("watch-stream", () => {
  let server: ApiServer;
  const clock = new ManualClock();

  before(async () => {
    server = await startApiServer(
      { bookmarkIntervalSeconds: 10, watchTimeoutSeconds: 60 },
      { clock, log: createLogger("watch-stream-spec", "warn") },
    );
  });
  after(() => server.close());

  it("sends bookmarks on the injected clock and ends at timeoutSeconds, without sleeping", async () => {
    const watch = await openWatch(
      server,
      `/api/v1/namespaces/default/configmaps?watch=true&allowWatchBookmarks=true&timeoutSeconds=25&resourceVersion=${server.api.resourceVersion}`,
    );
    await clock.advance(10_000);
    await until(() => watch.lines.length > 0);
    const bookmark = JSON.parse(watch.lines[0] ?? "{}");
    assert.equal(bookmark.type, "BOOKMARK");
    assert.equal(bookmark.object.metadata.resourceVersion, server.api.resourceVersion);
    await clock.advance(15_000);
    await watch.ended;
    assert.equal(watch.lines.length, 2);
  });
});
