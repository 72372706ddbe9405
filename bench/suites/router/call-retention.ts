// What keeps a finished gRPC call alive past a young collection (issue 22; a probe, not a suite). The
// router's HTTP/2 front door (services/rpc/h2) serves 64 concurrent streams from a client process on
// the other core, each answered with 32 messages 5 ms apart and trailers, under the router's GC
// settings. A 4.8 KB canary is hung on one object of each call as it ends; the median bytes promoted
// per scavenge (--trace-gc-nvp) then say whether that object outlived its call by a scavenge or more.
// Modes:
//   raw       the stream served by a plain handler, the canary on the handler's own state at 'close'
//   call      the stream served through Http2ServerCall, the canary on the call after call.end()
//   stream    the same, the canary on the stream
//   inflight  Http2ServerCall driven by an async function holding an InFlight controller, the canary
//             on the controller once it is done
//   none      as inflight, without a canary
//   mini      a small class standing in for Http2ServerCall; with MINI2..MINI10 set, variants of how
//             the per-call functions are kept (below). NO_CANARY=1 leaves the canaries out.
// What it printed on 2026-11-28 (Node 24.21), median KB promoted per scavenge:
//   raw 0; call 908-1,057 (310 without the canary); stream 1,030; inflight 657 with InFlight on a Set,
//   65 on array slots.
//   mini, no canary: 324, or 214-258 with its listeners, pushes and 'close' taken out; an object
//   literal instead of the class (MINI2) 0. With a function stored on a property of an object after
//   the object was made: 204-214 (MINI5 the function captures the object, MINI7 it does not, MINI8
//   on another object, MINI3/MINI4 a class field assigned later). With the function in the object
//   literal (MINI9) or an array literal (MINI10): 0. With an object (the stream) stored that way
//   instead (MINI6): 0.
//   So V8 keeps a function assigned to an object's property after the object was made, with all it
//   reaches, until the next full GC. Http2ServerCall assigned its data/end listeners and onCancel
//   that way; with them kept in an array made with them (and cancellation through a controller):
//   call 0 with the canary.
// The other switches, each one step of the bisection (all with the Http2ServerCall before that fix):
//   RAW_CLASS (raw's state a class instance with a private field and an arrow field: 0), RAW_HOLD (raw's
//   state holding the stream: 0), RAW_END / RAW_WRITE (call mode ending or writing on the stream
//   directly: 1,037 / 1,031), MINI_NOERR / MINI_NOPUSH / MINI_NOOFF (the stand-in without its 'error'
//   listener, its chunk pushes, taking its listeners off: 1,015 / 1,010 / 1,040 with the canary),
//   MINI_NOCLOSE (without its 'close' listener: 314 without the canary), and, with those three and
//   NO_CANARY, MINI_NOARROW / MINI_NOSTREAM (without its arrow field, its stream: 234 / 258).
//   In call mode the server prints how many calls closed when it stops.
// Usage: node bench/suites/router/call-retention.ts [mode]
import { fork, spawn } from "node:child_process";
import type http2 from "node:http2";
import readline from "node:readline";
import { Code } from "../../../services/kernel/errors.ts";
import { H2FrontDoor } from "../../../services/rpc/h2/h2-front-door.ts";
import type { H2ServerStream } from "../../../services/rpc/h2/h2-server-stream.ts";
import { Http2ServerCall } from "../../../services/rpc/http2-server-call.ts";
import { InFlight } from "../../../services/rpc/in-flight.ts";
import { keepStreams } from "./h2-stream-load.ts";
import { percentile } from "./load.ts";
import { pin } from "./processes.ts";

const ROLE = "--call-retention-role";
const mode = process.argv.slice(2).find((a) => !a.startsWith(ROLE)) ?? "call";
const role = process.argv.find((a) => a.startsWith(ROLE))?.slice(ROLE.length + 1);
const PATH = "/probe.Service/Generate";
const SECONDS = 15;
const canary = () => Array.from({ length: 600 }, (_, i) => i + 0.5);
const message = (n: number) => Buffer.from([0, 0, 0, 0, 2, n, n]);

if (role === "client") runClient(Number(process.env["CALL_RETENTION_PORT"]));
else if (role === "server") await runServer();
else await runProbe();

async function runProbe(): Promise<void> {
  const script = new URL(import.meta.url).pathname;
  const flags = [
    "--max-semi-space-size=16",
    "--min-semi-space-size=16",
    "--single-threaded-gc",
    "--trace-gc-nvp",
  ];
  const server = spawn("taskset", ["-c", "1", process.execPath, ...flags, script, mode, `${ROLE}=server`], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  const promoted: number[] = [];
  for await (const line of readline.createInterface({ input: server.stdout! })) {
    const f = Object.fromEntries([...line.matchAll(/(\S+)=(\S+)/g)].map((m) => [m[1], m[2]]));
    if (f["gc"] === "s" && Number(f["new_space_survived"]) > 10_000) promoted.push(Number(f["promoted"]));
  }
  const steady = promoted.slice(3);
  const median = Math.round(percentile(steady, 50) / 1024);
  console.log(JSON.stringify({ mode, scavenges: steady.length, medianPromotedKB: median }));
}

let closedCount = 0;
async function runServer(): Promise<void> {
  const inFlight = new InFlight();
  const viaCall = (stream: H2ServerStream, headers: http2.IncomingHttpHeaders, path: string) =>
    Http2ServerCall.serve(stream, headers, path, { typeName: "bytes", decode: (b) => b }, 1_000, (call) => {
      if (mode === "inflight" || mode === "none") {
        void viaAsync(call);
        return;
      }
      let n = 0;
      if (process.env["RAW_WRITE"])
        stream.respond([":status", "200", "content-type", "application/grpc"], { waitForTrailers: true });
      const timer = setInterval(() => {
        if (process.env["RAW_WRITE"]) stream.write(message(n));
        else call.write(message(n));
        if (++n < 32) return;
        clearInterval(timer);
        if (process.env["RAW_END"]) {
          stream.once("wantTrailers", () => stream.sendTrailers({ "grpc-status": "0" }));
          stream.end();
        } else call.end(Code.OK);
        void call.closed().then(() => closedCount++);
        const target = (mode === "stream" ? stream : call) as unknown as { canary: unknown };
        if (!process.env["NO_CANARY"]) target.canary = canary();
      }, 5);
    });
  const viaAsync = async (call: Http2ServerCall) => {
    const controller = inFlight.begin()!;
    try {
      for (let n = 0; n < 32; n++) {
        await new Promise((resolve) => setTimeout(resolve, 5));
        call.write(message(n));
      }
      call.end(Code.OK);
      await call.closed(controller.signal);
    } finally {
      if (mode === "inflight") (controller as unknown as { canary: unknown }).canary = canary();
      inFlight.end(controller);
    }
  };
  const door = await H2FrontDoor.listen({
    host: "127.0.0.1",
    port: 0,
    behind: "http://127.0.0.1:1",
    onError: (err) => console.error(err),
    handlers: new Map([[PATH, mode === "raw" ? raw : mode === "mini" ? mini : viaCall]]),
  });
  const client = fork(new URL(import.meta.url).pathname, [mode, `${ROLE}=client`], {
    execArgv: [],
    env: { ...process.env, CALL_RETENTION_PORT: String(door.port) },
  });
  pin(client.pid!, "0");
  client.on("message", () => {
    console.error(`calls closed: ${closedCount}`);
    process.exit(0);
  });
}

const ignore = () => {};
class Holder {
  n = 0;
  canary: unknown;
  #secret = 1;
  readonly #arrow = () => this.#secret;
  get secret(): number {
    return this.#arrow();
  }
}
class Mini {
  #stream: H2ServerStream | undefined;
  readonly #onClose = process.env["MINI_NOARROW"] ? ignore : () => this.#closed();
  #onData: ((chunk: Buffer) => void) | undefined;
  #onEnd: (() => void) | undefined;
  #chunks: Buffer[] = [];
  canary: unknown;
  constructor(stream: H2ServerStream) {
    if (!process.env["MINI_NOSTREAM"]) this.#stream = stream;
    if (!process.env["MINI_NOERR"]) stream.on("error", ignore);
    if (!process.env["MINI_NOCLOSE"]) stream.on("close", this.#onClose);
  }
  static serve(stream: H2ServerStream, start: (mini: Mini) => void): void {
    const mini = new Mini(stream);
    mini.#onData = process.env["MINI_NOPUSH"] ? () => {} : (chunk: Buffer) => mini.#chunks.push(chunk);
    mini.#onEnd = () => start(mini);
    stream.on("data", mini.#onData);
    stream.once("end", mini.#onEnd);
  }
  #closed(): void {
    const stream = this.#stream!;
    if (process.env["MINI_NOOFF"]) return;
    stream.off("close", this.#onClose);
    if (this.#onData) stream.off("data", this.#onData);
    if (this.#onEnd) stream.off("end", this.#onEnd);
    this.#onData = undefined;
    this.#onEnd = undefined;
    this.#stream = undefined;
  }
}

class Mini3 {
  stream: H2ServerStream | undefined;
  onData: (() => void) | undefined;
  onEnd: (() => void) | undefined;
  chunks: Buffer[] = [];
  canary: unknown;
  constructor(stream: H2ServerStream) {
    this.stream = stream;
  }
  static serve(stream: H2ServerStream, start: (m: Mini3) => void): void {
    const m3 = new Mini3(stream);
    m3.onData = () => {};
    m3.onEnd = () => start(m3);
    stream.on("data", m3.onData);
    stream.once("end", m3.onEnd);
  }
}

function mini(stream: H2ServerStream): void {
  const start = (m: { canary: unknown }) => {
    stream.respond([":status", "200", "content-type", "application/grpc"], { waitForTrailers: true });
    const count = { n: 0 };
    const timer = setInterval(() => {
      stream.write(message(count.n));
      if (++count.n < 32) return;
      clearInterval(timer);
      stream.once("wantTrailers", () => stream.sendTrailers({ "grpc-status": "0" }));
      stream.end();
      if (!process.env["NO_CANARY"]) m.canary = canary();
    }, 5);
  };
  if (process.env["MINI3"]) {
    const m3 = new Mini3(stream);
    m3.onData = () => {};
    m3.onEnd = () => start(m3);
    stream.on("data", m3.onData);
    stream.once("end", m3.onEnd);
  } else if (process.env["MINI4"]) {
    Mini3.serve(stream, start);
  } else if (process.env["MINI5"]) {
    const obj: { canary: unknown; onEnd?: () => void } = { canary: undefined };
    obj.onEnd = () => start(obj);
    stream.on("data", () => {});
    stream.once("end", obj.onEnd);
  } else if (process.env["MINI7"]) {
    const obj: { canary: unknown; onEnd?: () => void } = { canary: undefined };
    const other = { canary: undefined as unknown };
    obj.onEnd = () => start(other);
    stream.on("data", () => {});
    stream.once("end", obj.onEnd);
  } else if (process.env["MINI8"]) {
    const obj = { canary: undefined as unknown };
    const holder: { onEnd?: () => void } = {};
    holder.onEnd = () => start(obj);
    stream.on("data", () => {});
    stream.once("end", holder.onEnd);
  } else if (process.env["MINI9"]) {
    const other = { canary: undefined as unknown };
    const obj = { onEnd: () => start(other) };
    stream.on("data", () => {});
    stream.once("end", obj.onEnd);
  } else if (process.env["MINI10"]) {
    const other = { canary: undefined as unknown };
    const fns = [() => start(other)];
    stream.on("data", () => {});
    stream.once("end", fns[0]!);
  } else if (process.env["MINI6"]) {
    const obj: { canary: unknown; stream?: unknown } = { canary: undefined };
    obj.stream = stream;
    stream.on("data", () => {});
    stream.once("end", () => start(obj));
  } else if (process.env["MINI2"]) {
    const obj = { canary: undefined as unknown };
    stream.on("data", () => {});
    stream.once("end", () => start(obj));
  } else Mini.serve(stream, start);
}

/** The same answer without Http2ServerCall: the canary on this handler's own state at 'close'. */
function raw(stream: H2ServerStream): void {
  const state: { n: number; canary?: unknown } = process.env["RAW_CLASS"] ? new Holder() : { n: 0 };
  if (process.env["RAW_HOLD"]) (state as unknown as { stream: unknown }).stream = stream;
  const onClose = () => {
    state.canary = canary();
    stream.off("close", onClose);
  };
  stream.on("close", onClose);
  stream.on("data", () => {});
  stream.once("end", () => {
    stream.respond([":status", "200", "content-type", "application/grpc"], { waitForTrailers: true });
    const timer = setInterval(() => {
      stream.write(message(state.n));
      if (++state.n < 32) return;
      clearInterval(timer);
      stream.once("wantTrailers", () => stream.sendTrailers({ "grpc-status": "0" }));
      stream.end();
    }, 5);
  });
}

function runClient(port: number): void {
  keepStreams(port, PATH, Buffer.from([0, 0, 0, 0, 3, 1, 2, 3]), 64, Date.now() + SECONDS * 1000);
}
