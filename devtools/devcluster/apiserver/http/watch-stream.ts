// A watch over HTTP: headers are flushed at once, then one JSON event per line. The stream ends
// after timeoutSeconds (or the server's limit); BOOKMARK events carry the current resourceVersion
// when the client allows them; a resourceVersion older than the history gets an ERROR event
// with a 410 Expired Status, after which clients relist.
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Clock } from "../../../../services/kernel/clock.ts";
import type { KubeObject } from "../../../../services/kube/kube-object.ts";
import type { ResourceRef, WatchEvent, WatchOptions } from "../cluster/api-types.ts";
import type { ClusterApi } from "../cluster/cluster-api.ts";
import { toStatus } from "../core/api-status.ts";
import { type Rendering, toMetadata, toTable } from "./table.ts";

export interface WatchServeOptions {
  clock: Clock;
  timeoutMs: number;
  bookmarks: boolean;
  bookmarkIntervalMs: number;
  rendering: Rendering;
}

export function serveWatch(
  req: IncomingMessage,
  res: ServerResponse,
  api: ClusterApi,
  ref: ResourceRef,
  options: WatchOptions,
  serve: WatchServeOptions,
): void {
  const type = api.resolve(ref);
  res.writeHead(200, {
    "Content-Type": "application/json",
    "Transfer-Encoding": "chunked",
    "Cache-Control": "no-cache, private",
  });
  res.flushHeaders();
  let first = true;
  const render = (object: KubeObject): unknown => {
    const r = serve.rendering;
    if (r.kind === "object") return object;
    if (r.kind === "metadata") return toMetadata(object, r.version);
    const table = toTable(type, [object], {
      now: serve.clock.now(),
      version: r.version,
      include: "Metadata",
      headers: first,
    });
    first = false;
    return table;
  };
  const write = (event: WatchEvent) => {
    if (!res.writableEnded)
      res.write(
        `${JSON.stringify({ type: event.type, object: event.type === "BOOKMARK" || event.type === "ERROR" ? event.object : render(event.object) })}\n`,
      );
  };
  const timers: (() => void)[] = [];
  let handle: { stop(): void } | undefined;
  const finish = () => {
    handle?.stop();
    for (const cancel of timers) cancel();
    if (!res.writableEnded) res.end();
  };
  try {
    handle = api.watch(ref, options, write);
  } catch (err) {
    // 410 Expired (and any other refusal) arrives as an ERROR event, as the watch cache sends it.
    write({ type: "ERROR", object: toStatus(err) as unknown as KubeObject });
    finish();
    return;
  }
  timers.push(serve.clock.setTimer(serve.timeoutMs, finish));
  if (serve.bookmarks) {
    const tick = () => {
      write(api.bookmark(type));
      timers.push(serve.clock.setTimer(serve.bookmarkIntervalMs, tick));
    };
    timers.push(serve.clock.setTimer(serve.bookmarkIntervalMs, tick));
  }
  req.on("close", finish);
  res.on("close", finish);
}
