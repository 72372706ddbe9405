// `npm run bench -- router [overhead|cache|bounded ...]`: the router (issue 4), with workers on the
// `tiny` preset so the router is what is measured, every ratio measured in this one run:
//   a. overhead: end-to-end latency through the router vs through a bare pass-through proxy (the floor
//      of one extra hop) and straight to the worker, 32-token generations at 1, 16 and 64 concurrent,
//      router and proxy on a core of their own; the router's GC pauses under each load (issue 22);
//   b. cache-aware routing: TTFT p50 of consistent hashing on prefix blocks vs round-robin over 4
//      workers whose KV pools hold fewer prefixes than the workload has, and with no prefix reuse;
//   c. bounded loads under Zipf(1.1) session keys: peak in-flight per worker vs the mean, share of
//      requests on their hash home, and keys moved by adding a 5th worker.
import { existsSync } from "node:fs";
import { loadavg } from "node:os";
import path from "node:path";
import { createCheckpoint } from "../../devtools/model-factory/create-checkpoint.ts";
import { type Check, writeResult } from "../report.ts";
import { boundedLoads } from "./router/bounded-loads.ts";
import { cacheAware } from "./router/cache-aware.ts";
import { overhead } from "./router/overhead.ts";

const MODEL_DIR = path.resolve(import.meta.dirname, "../../.tessera/bench/tiny-llama");
/** onnxruntime threads per worker: the machine's cores are shared by workers, router and clients. */
const THREADS = 1;

/** What the GC investigation of issue 22 found (docs/DESIGN.md, "Router garbage collection"). */
const NOTES = [
  "Router GC (issue 22), found with bench/suites/router/gc-probe.ts (router alone on one pinned core, 64 concurrent 32-token generations): the retained heap is stable (~74 MB in heap snapshots 10 s apart, half of it tokenizer strings): no leak.",
  "Allocation ~64 MB/s at ~13k tokens/s, ~4.9 KB per relayed token with each request's share (V8 sampling heap profiler): ~25% grpc-js and node:http2 sending each message, ~14% decoding relay frames, ~10% Continuation events, ~6% OpenTelemetry attribute hashing per request; after this branch's hot-path changes ~3.8 KB per token in a paired run (sampled, +-20% on the shared machine).",
  "What a scavenge copies is per-request state (grpc-js server call and HTTP/2 stream ~37%, protobuf-es request messages ~8%, our attempt/upstream/continuation ~25%; ~45 KB per request in flight), not per-token objects. With V8's default growth to 32 MiB semi-spaces every scavenge (~0.7 s apart) found all 64 requests alive: ~4 MB copied per scavenge, promoted at the next, filling the old generation (mark-compacts of 10-130 ms).",
  "On one CPU the parallel scavenger's main thread waits for helper threads that share its core (scavenge.parallel 39 ms of a 57 ms pause). tessera router now re-executes with --max-semi-space-size=8 and, on one CPU, --single-threaded-gc (services/cli/router-process.ts): median scavenge ~2 ms instead of 15-30 ms; 16 MiB gave a ~12 ms median, 4 MiB ~1.4 ms with more mark-compacts.",
  "Since: the router serves Generate on its HTTP/2 streams itself (services/rpc/http2-server-call.ts; grpc-js keeps the port and the other methods). Paired gc-probe runs at c=64 (sampled): 4.5 -> 3.7 KB allocated per relayed token, 0.70 -> 0.57 scavenges per 1,000 tokens, 570 -> 357 KB promoted per scavenge; what survives now is our per-request state and Node's Http2Stream, what is allocated per token is decoding relay batches (~20%) and Node's HTTP/2 write path (~15%).",
  "Mark-compact pauses (--trace-gc-nvp, single-threaded GC) are evacuating the young generation and clearing: finalizing the external strings Node's HTTP/2 makes of each received header value, and weak references, both growing with the request state promoted since the last one. Since: a router loads @kubernetes/client-node, ioredis and the batch command's modules only when it uses them (heap after start 56 -> 32 MB), and runs with 16 MiB semi-spaces instead of 8 (gc-probe at c=64, 30 s: 33 instead of 104 MB promoted, median scavenge ~4 ms instead of ~3, no mark-compact instead of 3-4).",
  "The longest pauses left are the scheduler's: on 2 cores shared with other work (load average 6-15 during these runs) a scavenge of 0.1 MB took 15 ms and mark-compacts 20-50 ms; the histogram per level shows the distribution beside the longest.",
  "Idle gaps, not load, bring the long pauses left (2026-11-28): the router alone in back-to-back rounds at c=64 promoted 15-60 KB per scavenge, longest pause 4.2 ms, no mark-compact; with 2.5 s idle between rounds (as the three paths taking turns leave it) 450-840 KB per scavenge after a mark-compact that fell in a gap, a mark-compact every ~5-8 s, pauses up to 9-19 ms. No V8 flag tried removes it (docs/DESIGN.md).",
  "Young generation held at 8 MiB (2026-11-28, second session): V8 shrank the idle router's semi-spaces to 1-2 MiB in the gaps between rounds and grew them back step by step, so each round began with scavenges every 25-50 ms that promoted every request in flight (240 KB per scavenge, median; 6 mark-compacts in a probe's c=64 rounds). With --min-semi-space-size=8 beside the max: 47 KB, 0-2 mark-compacts. Allocation per relayed token 3.74 -> 2.95 KB besides (front door DATA frames written into one flush buffer, its output and stream queues kept allocated, relay frames without request id and text, router metrics aggregated in place instead of an attribute-hashed OpenTelemetry record each). What still misses the 5 ms at c=64: a mark-compact (one per ~15-20 s of load) of 3.4-9 ms when it falls in the c=64 rounds.",
  "The overhead checks compare the time added outside the worker (latency less the worker's server-timing): end-to-end p50/p99 of the direct and proxy paths, which add nothing to a request's work, differed by 10-40 ms within one run at c=16/64 (the batches a request joins).",
];

export async function run(args: string[]): Promise<void> {
  const parts = args.length > 0 ? args : ["overhead", "cache", "bounded"];
  if (!existsSync(path.join(MODEL_DIR, "config.json")))
    await createCheckpoint({ arch: "llama", preset: "tiny", seed: 1, out: MODEL_DIR });
  // Other work on the machine (other processes' tests) shows up here: the load average when the run
  // started and when it ended.
  const figures: Record<string, unknown> = { workerThreads: THREADS, loadAverageAtStart: loadavg() };
  const checks: Check[] = [];
  for (const part of parts) {
    const measured =
      part === "overhead"
        ? await overhead(MODEL_DIR, THREADS)
        : part === "cache"
          ? await cacheAware(MODEL_DIR, THREADS)
          : await boundedLoads(MODEL_DIR, THREADS);
    figures[part] = measured.figures;
    checks.push(...measured.checks);
  }
  figures["loadAverageAtEnd"] = loadavg();
  figures["notes"] = NOTES;
  writeResult({
    suite: "router",
    description:
      "Router over tiny-preset workers (1 onnxruntime thread each), grpc-js clients in the bench process, on a machine other work may share: a. end-to-end latency of 32-token generations through the router (over its tessera.v1.Relay stream to the worker) vs straight to one worker, and through a bare pass-through HTTP/2 proxy (the floor one extra hop costs), at 1, 16, 64 concurrent, closed-loop rounds in rotating order (32 of 16 requests at 1 concurrent, 24 of 160 at 16, 8 of 640 at 64; the first `concurrency` requests of a round not counted), the router and the proxy started pinned to the last core (each then sees one CPU: the router runs with semi-spaces held at 8 MiB and single-threaded GC, services/cli/router-process.ts, and the proxy with the same node flags), the worker and the clients on the other(s); the router's GC pauses during its rounds recorded with perf_hooks' GC observer (histogram per level); per request the end-to-end latency and the time added outside the worker (latency less the worker's own time, from its server-timing trailer, which proxy and router pass on); checks against the bare proxy on the time added: p50 +0.3 ms at each level, p99 +3 ms at 16 and +5 ms at 64; longest GC pause at 64 <= 5 ms; b. TTFT p50 of consistent hashing on prefix blocks vs round-robin, 4 workers with 192-block KV pools, 16 tenants × 448-token system prompts + 16-token questions, 4 concurrent, 4 alternating rounds; and the same with every prompt unique; c. Zipf(1.1) session keys over 1,000 keys, 64 concurrent over 4 workers, epsilon 0.15 (and the default 0.25 in the figures): peak in-flight per worker / mean in flight per worker, share of requests on their key's home, keys moved when a 5th worker joins",
    figures,
    checks,
  });
}
