// Does a node:http2 server keep its streams' objects alive after they close? (issue 22; a probe, not a
// suite). This uses no Tessera code. A bare node:http2 server answers `concurrency` concurrent streams,
// each with 32 small DATA frames 5 ms apart and gRPC-style trailers, so each stream lives ~160 ms. The
// server runs in this process, pinned to one core, under the router's GC settings (16 MiB semi-spaces
// held at 16, single-threaded GC); the client is a child process. It then prints the server's
// scavenges from --trace-gc-nvp: what each copied (survived) and what it promoted. Something that dies
// young is copied at most once and promoted never.
// What it printed on 2026-11-28 (Node 24.21): scavenges every ~1.5 s, and each promoted ~95% of
// what the previous one copied (median ~800 of ~850 KB; V8's promotion_rate 94.5-96.3%). That means
// every stream is kept past its close until a mark-compact. The result was the same without trailers (530 of 560 KB), without DATA
// frames (a response and trailers 160 ms later), and with the native handle's owner links (its
// every own key, `owner` and `owner_symbol`) cleared at 'close' (673 of 763 KB).
// Two more controls, without HTTP/2, hold each "stream" while it runs in a long-lived container:
// `aged-map`, a Map whose table has aged into the old generation (printed: 96% promoted, as V8 keeps
// what passes through such a Map), and `slots`, an array slot emptied when done (0%).
// More variants (2026-11-28, third session), two or three runs each beside `plain` runs of 767-831 KB promoted:
// `slotmaps`, the session's Map of open streams and Set of pending ones replaced by array-slot
// stand-ins: 834-848 KB, no change, so V8's hash tables in node:http2 are not what keeps the streams;
// `strip`, every own key of a closed stream and of its readable and writable states cleared one
// setImmediate after 'close': 122 KB (survived 244 against ~830). So what is kept is each closed
// stream's own graph (its listeners, sent headers and trailers, states), reached through the stream.
// and `raw`: the same load served by a minimal HTTP/2 server on node:net (h2-raw.ts; its own client too),
// each stream's state in an array slot: 1 KB promoted per scavenge (survived 51 KB), 5,569 streams in
// 15 s, against `plain`'s 828 of 875 KB in a run between two of them.
// Usage: node bench/suites/router/h2-retention.ts [plain|notrailers|nodata|unlink|slotmaps|strip|raw|control|aged-map|slots]
//   [seconds] [concurrency]
import { fork, spawn } from "node:child_process";
import http2 from "node:http2";
import type { AddressInfo, Server } from "node:net";
import readline from "node:readline";
import { rawClient, rawServer } from "./h2-raw.ts";
import { keepStreams } from "./h2-stream-load.ts";
import { percentile } from "./load.ts";
import { pin } from "./processes.ts";

const ROLE = "--h2-retention-role";
const [mode = "plain", secondsArg = "15", concurrencyArg = "64"] = process.argv
  .slice(2)
  .filter((a) => !a.startsWith(ROLE));
const seconds = Number(secondsArg);
const concurrency = Number(concurrencyArg);
const role = process.argv.find((a) => a.startsWith(ROLE))?.slice(ROLE.length + 1);

if (role === "client") runClient(Number(process.env["H2_RETENTION_PORT"]));
else if (role === "server" && ["control", "aged-map", "slots", "queue"].includes(mode)) runControl();
else if (role === "server") runServer();
else await runProbe();

/** Starts the server pinned to core 1 with the router's GC settings and reads its GC trace. */
async function runProbe(): Promise<void> {
  const flags = [
    "--max-semi-space-size=16",
    "--min-semi-space-size=16",
    "--single-threaded-gc",
    "--trace-gc-nvp",
  ];
  const script = new URL(import.meta.url).pathname;
  const args = [...flags, script, mode, String(seconds), String(concurrency), `${ROLE}=server`];
  const server = spawn("taskset", ["-c", "1", process.execPath, ...args], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  const scavenges: { survived: number; promoted: number; at: number }[] = [];
  let markCompacts = 0;
  for await (const line of readline.createInterface({ input: server.stdout! })) {
    const fields = Object.fromEntries([...line.matchAll(/(\S+)=(\S+)/g)].map((m) => [m[1], m[2]]));
    if (fields["gc"] === "mc") markCompacts++;
    if (fields["gc"] !== "s") continue;
    const survived = Number(fields["new_space_survived"]);
    // The back-to-back scavenges V8 runs around a mark-compact copy next to nothing: not counted.
    if (survived > 10_000)
      scavenges.push({ survived, promoted: Number(fields["promoted"]), at: Number(line.split(/\s+/)[1]) });
  }
  const steady = scavenges.slice(3);
  const median = (xs: number[]) => percentile(xs, 50);
  const intervals = steady.slice(1).map((s, i) => s.at - steady[i]!.at);
  console.log(
    JSON.stringify({
      mode,
      node: process.version,
      scavenges: steady.length,
      markCompacts,
      medianIntervalMs: median(intervals),
      medianSurvivedKB: Math.round(median(steady.map((s) => s.survived)) / 1024),
      medianPromotedKB: Math.round(median(steady.map((s) => s.promoted)) / 1024),
    }),
  );
}

/**
 * The control: the same lifetimes and writes without node:http2. `concurrency` "streams" at a time,
 * each an object graph of ~1.5 KB and a 5 ms interval for 32 ticks that each drop ~1 KB. What it printed: every scavenge
 * promoted 0 KB.
 */
function runControl(): void {
  const end = Date.now() + seconds * 1000;
  const sink: Buffer[] = [];
  let _dropped: unknown;
  const held = holder();
  let id = 0;
  const one = () => {
    if (Date.now() > end) process.exit(0);
    const state = { frames: [] as Buffer[], headers: Array.from({ length: 24 }, (_, i) => ({ i })) };
    const key = ++id;
    held.add(key, state);
    let n = 0;
    const timer = setInterval(() => {
      state.frames.push(Buffer.allocUnsafe(20).fill(n));
      // What a write allocates and drops (node:http2 allocates ~1 KB per write).
      _dropped = Array.from({ length: 40 }, (_, i) => ({ i, n }));
      if (++n < 32) return;
      clearInterval(timer);
      sink[0] = state.frames[31]!;
      held.delete(key);
      one();
    }, 5);
  };
  for (let i = 0; i < concurrency; i++) one();
}

/** Where the control keeps each "stream" while it runs: nowhere, an aged Map, or an array slot. */
function holder(): { add(key: number, value: object): void; delete(key: number): void } {
  if (mode === "aged-map") {
    const map = new Map<number, object>();
    for (let i = 0; i < concurrency; i++) map.set(-1 - i, {});
    // Two scavenges or more while the Map and its table sit unchanged: both reach the old generation.
    let garbage: object[] = [];
    for (let round = 0; round < 400; round++) garbage = Array.from({ length: 20_000 }, (_, i) => ({ i }));
    garbage.length = 0;
    map.clear();
    return { add: (key, value) => map.set(key, value), delete: (key) => map.delete(key) };
  }
  if (mode === "queue") {
    // A long-lived array, values pushed at its end and taken out where they are (as a wait queue does).
    const queue: { key: number; value: object }[] = [];
    return {
      add(key, value) {
        queue.push({ key, value });
      },
      delete(key) {
        const i = queue.findIndex((entry) => entry.key === key);
        if (i >= 0) queue.splice(i, 1);
      },
    };
  }
  if (mode === "slots") {
    const slots: (object | undefined)[] = [];
    const free: number[] = [];
    const slotOf = new Map<number, number>();
    return {
      add(key, value) {
        const slot = free.pop() ?? slots.length;
        slots[slot] = value;
        slotOf.set(key, slot);
      },
      delete(key) {
        const slot = slotOf.get(key)!;
        slotOf.delete(key);
        slots[slot] = undefined;
        free.push(slot);
      },
    };
  }
  return { add: () => {}, delete: () => {} };
}

function runServer(): void {
  if (mode === "raw") {
    listenAndLoad(rawServer());
    return;
  }
  const server = http2.createServer();
  if (mode === "slotmaps") server.on("session", slotBackedStreams);
  server.on("stream", (stream) => {
    if (mode === "unlink") unlinkOnClose(stream);
    if (mode === "strip") stream.once("close", () => setImmediate(() => strip(stream)));
    stream.on("error", () => {});
    stream.on("data", () => {});
    stream.on("end", () => {
      const trailers = mode !== "notrailers";
      stream.respond({ ":status": 200, "content-type": "application/grpc" }, { waitForTrailers: trailers });
      const finish = () => {
        if (trailers) stream.once("wantTrailers", () => stream.sendTrailers({ "grpc-status": "0" }));
        stream.end();
      };
      if (mode === "nodata") {
        setTimeout(finish, 160);
        return;
      }
      let n = 0;
      const timer = setInterval(() => {
        stream.write(Buffer.allocUnsafe(20).fill(n));
        if (++n === 32) {
          clearInterval(timer);
          finish();
        }
      }, 5);
    });
  });
  listenAndLoad(server);
}

/** Listens, then starts the load's client on the other core and exits when it is done. */
function listenAndLoad(server: Server): void {
  server.listen(0, "127.0.0.1", () => {
    const { port } = server.address() as AddressInfo;
    const script = new URL(import.meta.url).pathname;
    const client = fork(script, [mode, String(seconds), String(concurrency), `${ROLE}=client`], {
      execArgv: [],
      env: { ...process.env, H2_RETENTION_PORT: String(port) },
    });
    // The client on the other core, as the router bench's load generator is.
    pin(client.pid!, "0");
    client.on("message", () => {
      server.close();
      process.exit(0);
    });
  });
}

/**
 * Replaces the session's Map of open streams and Set of pending ones with stand-ins that keep each
 * entry in an array slot emptied on delete (what the `slots` control does), leaving V8's ordered hash
 * tables out of a stream's life.
 */
function slotBackedStreams(session: http2.ServerHttp2Session): void {
  const own = session as unknown as Record<symbol, Record<string, unknown> | undefined>;
  const key = Object.getOwnPropertySymbols(session).find((s) => own[s]?.["pendingStreams"] !== undefined);
  const state = key && own[key];
  if (!state) throw new Error("this Node keeps a session's streams elsewhere");
  state["streams"] = new SlotMap();
  state["pendingStreams"] = new SlotMap();
}

/** A Map/Set stand-in over array slots, for a few dozen entries: linear lookups, no hash table. */
class SlotMap {
  private keys: unknown[] = [];
  private values: unknown[] = [];
  size = 0;
  get(key: unknown): unknown {
    const i = this.keys.indexOf(key);
    return i < 0 ? undefined : this.values[i];
  }
  set(key: unknown, value: unknown): this {
    const i = this.keys.indexOf(key);
    if (i >= 0) this.values[i] = value;
    else {
      const free = this.keys.indexOf(undefined);
      const slot = free < 0 ? this.keys.length : free;
      this.keys[slot] = key;
      this.values[slot] = value;
      this.size++;
    }
    return this;
  }
  add(value: unknown): this {
    return this.set(value, value);
  }
  has(key: unknown): boolean {
    return this.keys.indexOf(key) >= 0;
  }
  delete(key: unknown): boolean {
    const i = this.keys.indexOf(key);
    if (i < 0) return false;
    this.keys[i] = undefined;
    this.values[i] = undefined;
    this.size--;
    return true;
  }
  forEach(fn: (value: unknown, key: unknown) => void): void {
    for (let i = 0; i < this.keys.length; i++)
      if (this.keys[i] !== undefined) fn(this.values[i], this.keys[i]);
  }
}

/**
 * Cuts what a closed stream references, once Node is done with the close: every own key of the stream
 * and of its two stream states. Not safe for a server (a late write callback or native callback would
 * read those states); it shows how much a kept stream carries.
 */
function strip(stream: http2.ServerHttp2Stream): void {
  const target = stream as unknown as Record<string | symbol, unknown>;
  for (const state of [target["_readableState"], target["_writableState"]] as Record<
    string | symbol,
    unknown
  >[])
    for (const key of Reflect.ownKeys(state)) state[key] = undefined;
  for (const key of Reflect.ownKeys(target)) target[key] = undefined;
}

/** Clears the links from the stream's native handle back to the stream once it closed. */
function unlinkOnClose(stream: http2.ServerHttp2Stream): void {
  const key = Object.getOwnPropertySymbols(stream).find((s) => String(s) === "Symbol(kHandle)");
  const handle = key && (stream as unknown as Record<symbol, Record<string | symbol, unknown>>)[key];
  if (!handle) throw new Error("this Node keeps a stream's handle elsewhere");
  // Every own key: the handle links back with the symbol `owner_symbol` and the string key `owner`.
  // A write completing after the close reads `owner_symbol` and only asks whether it is destroyed.
  stream.once("close", () => {
    for (const key of Reflect.ownKeys(handle)) handle[key] = { destroyed: true };
  });
}

function runClient(port: number): void {
  const end = Date.now() + seconds * 1000;
  if (mode === "raw") {
    rawClient(port, concurrency, end, (streams) => {
      console.error(`raw client: ${streams} streams completed`);
      process.send?.("done");
    });
    return;
  }
  keepStreams(port, "/x", Buffer.alloc(30), concurrency, end);
}
