// The client side of the retention probes (h2-retention.ts, call-retention.ts): node:http2 keeping
// `concurrency` POST streams to `path` going until `end` (ms since the epoch), each sending `body` and
// reading its answer whole; then it closes the session and tells the parent process "done".
import http2 from "node:http2";

export function keepStreams(
  port: number,
  path: string,
  body: Uint8Array,
  concurrency: number,
  end: number,
): void {
  const session = http2.connect(`http://127.0.0.1:${port}`);
  let live = concurrency;
  const one = () => {
    if (Date.now() > end) {
      if (--live === 0) {
        session.close();
        process.send?.("done");
      }
      return;
    }
    const request = session.request({ ":method": "POST", ":path": path, "content-type": "application/grpc" });
    request.on("data", () => {});
    request.on("end", one);
    request.on("error", () => {});
    request.end(body);
  };
  for (let i = 0; i < concurrency; i++) one();
}
