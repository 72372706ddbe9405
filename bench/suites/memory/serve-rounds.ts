// Resident memory of a real `tessera serve` under load (issue 18): starts the server as a child process
// (as a user would), reads its resident set after load, then drives rounds of concurrent Generate
// streams through a real gRPC client, a third of them cancelled mid-stream, and reads the resident set
// after each round. Prompts and output lengths vary, so the model runs many batch and sequence shapes.
// The weights the engine holds and its KV pool come from the server's "model loaded" log line. After
// load and after the last round it also says where the resident set lies, by kind of mapping (smaps.ts),
// and after the last round the heaps of its V8 isolates (the event loop's and the model thread's), from
// a diagnostic report the server writes on SIGUSR2 (not after load: writing it allocates).
// Run alone (`node bench/suites/memory/serve-rounds.ts <checkpoint dir> [rounds]`) it prints one JSON
// line; the engine suite calls serveRounds.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { GenerateResponse } from "../../../proto/gen/tessera/v1/inference_pb.js";
import { Inference } from "../../../proto/gen/tessera/v1/inference_pb.js";
import { startServe } from "../../../services/cli/child-process.ts";
import { GrpcClient } from "../../../services/rpc/grpc-client.ts";
import { waitUntilServing } from "../../../services/rpc/health-client.ts";
import { type ResidentBreakdown, residentBreakdown } from "./smaps.ts";

export interface ProcessMemory {
  rss: number;
  rssAnon: number;
  rssFile: number;
}

/** Where the resident set lies: by kind of mapping, and the V8 heaps' committed bytes by isolate. */
export interface Breakdown extends ResidentBreakdown {
  v8Heaps: number[];
}

export interface ServeRounds {
  /** From the server's "model loaded" log line. */
  weightBytes: number;
  kvPoolBytes: number;
  afterLoad: ProcessMemory;
  afterRounds: ProcessMemory[];
  breakdownAfterLoad: ResidentBreakdown;
  breakdownAfterRounds: Breakdown;
  /** Streams that ended with all their tokens / cancelled by the client, per round. */
  finished: number[];
  cancelled: number[];
  roundSeconds: number[];
}

export interface RoundsOptions {
  rounds: number;
  streams: number;
  /** Extra environment of the server process. */
  env?: NodeJS.ProcessEnv;
  args?: string[];
  /** Called with the server's pid after load (round 0) and after each round. */
  inspect?: (pid: number, round: number) => void;
}

/** VmRSS, RssAnon and RssFile of a process (all its threads), in bytes. */
export function processMemory(pid: number): ProcessMemory {
  const status = fs.readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(status)?.[1]) * 1024;
  return { rss: kb("VmRSS"), rssAnon: kb("RssAnon"), rssFile: kb("RssFile") };
}

let seed = 20261127;
function rand(): number {
  seed = (seed * 1103515245 + 12345) % 2 ** 31;
  return seed / 2 ** 31;
}
const between = (lo: number, hi: number) => lo + Math.floor(rand() * (hi - lo + 1));

/**
 * One stream: a prompt of 8 to 256 tokens, 16 to 160 tokens out; `cancelAfter` tokens, then the client
 * cancels it (undefined: read to the end).
 */
function stream(
  client: GrpcClient,
  vocab: number,
  cancelAfter: number | undefined,
): Promise<"done" | "cancelled"> {
  const ids = Array.from({ length: between(8, 256) }, () => between(3, vocab - 1));
  const call = client.serverStream(Inference.method.generate, {
    prompt: { case: "tokenIds", value: { ids } },
    sampling: { maxTokens: between(16, 160), ignoreEos: true, temperature: 0.8, topP: 0.95 },
  });
  let tokens = 0;
  return new Promise((resolve, reject) => {
    call.on("data", (m: GenerateResponse) => {
      tokens += m.tokens.length;
      if (cancelAfter !== undefined && tokens >= cancelAfter) {
        cancelAfter = undefined;
        call.cancel();
        resolve("cancelled");
      }
    });
    call.on("end", () => resolve("done"));
    call.on("error", (err: { code?: number }) => (err.code === 1 ? resolve("cancelled") : reject(err)));
  });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The committed heap of each V8 isolate of `pid`, from the diagnostic report it writes to `dir` on SIGUSR2. */
async function v8Heaps(pid: number, dir: string): Promise<number[]> {
  const before = new Set(fs.readdirSync(dir));
  process.kill(pid, "SIGUSR2");
  for (let waited = 0; waited < 30_000; waited += 100) {
    await sleep(100);
    const file = fs.readdirSync(dir).find((f) => !before.has(f) && f.endsWith(".json"));
    if (!file) continue;
    const text = fs.readFileSync(path.join(dir, file), "utf8");
    if (!text.trimEnd().endsWith("}")) continue; // still being written
    type Report = { javascriptHeap: { totalMemory: number }; workers?: Report[] };
    const report = JSON.parse(text) as Report;
    return [report, ...(report.workers ?? [])].map((r) => r.javascriptHeap.totalMemory);
  }
  throw new Error(`no diagnostic report from ${pid} in ${dir}`);
}

/** Where `pid`'s resident set lies (read before the report, whose writing allocates). */
async function breakdown(pid: number, reports: string): Promise<Breakdown> {
  const mappings = residentBreakdown(fs.readFileSync(`/proc/${pid}/smaps`, "utf8"));
  return { ...mappings, v8Heaps: await v8Heaps(pid, reports) };
}

export async function serveRounds(modelDir: string, o: RoundsOptions): Promise<ServeRounds> {
  // Reports are written on SIGUSR2 only (after load and after the last round); the flag costs nothing before.
  const reports = fs.mkdtempSync(path.join(os.tmpdir(), "tessera-serve-report-"));
  const env = o.env ?? process.env;
  const nodeOptions = [env["NODE_OPTIONS"], "--report-on-signal", `--report-directory=${reports}`];
  const served = await startServe(modelDir, o.args ?? [], {
    ...env,
    NODE_OPTIONS: nodeOptions.filter((x) => x).join(" "),
  });
  const pid = served.child.pid!;
  const client = new GrpcClient(served.address);
  try {
    await waitUntilServing(served.address, 120_000);
    const loaded = served.logs.find((l) => l["msg"] === "model loaded");
    if (!loaded) throw new Error(`no "model loaded" log line: ${JSON.stringify(served.logs)}`);
    // The start-up race picks the attention backend, and the backends' activations differ in size.
    process.stderr.write(
      `attention backend: ${loaded["attention"]} ${JSON.stringify(loaded["attentionTimingsMs"])}\n`,
    );
    const { models } = await client.unary(Inference.method.listModels, {});
    const vocab = Math.min(models[0]!.vocabSize, 8000);
    await sleep(1000);
    const afterLoad = processMemory(pid);
    o.inspect?.(pid, 0);
    const breakdownAfterLoad = residentBreakdown(fs.readFileSync(`/proc/${pid}/smaps`, "utf8"));
    const result: ServeRounds = {
      weightBytes: Number(loaded["weightBytes"]),
      kvPoolBytes: Number(loaded["kvPoolBytes"]),
      afterLoad,
      afterRounds: [],
      breakdownAfterLoad,
      breakdownAfterRounds: { ...breakdownAfterLoad, v8Heaps: [] },
      finished: [],
      cancelled: [],
      roundSeconds: [],
    };
    for (let round = 0; round < o.rounds; round++) {
      const t0 = performance.now();
      const ends = await Promise.all(
        Array.from({ length: o.streams }, (_, i) =>
          stream(client, vocab, i % 3 === 2 ? between(1, 12) : undefined),
        ),
      );
      result.roundSeconds.push((performance.now() - t0) / 1000);
      result.finished.push(ends.filter((e) => e === "done").length);
      result.cancelled.push(ends.filter((e) => e === "cancelled").length);
      // The cancelled requests leave the engine at its next step; let it go idle before reading.
      await sleep(1000);
      result.afterRounds.push(processMemory(pid));
      o.inspect?.(pid, round + 1);
      if (round === o.rounds - 1) result.breakdownAfterRounds = await breakdown(pid, reports);
      process.stderr.write(
        `round ${round + 1}: ${(result.afterRounds.at(-1)!.rss / 2 ** 20).toFixed(0)} MiB resident, ${result.roundSeconds.at(-1)!.toFixed(1)} s\n`,
      );
    }
    return result;
  } finally {
    client.close();
    served.child.kill("SIGTERM");
    await served.exited;
    fs.rmSync(reports, { recursive: true, force: true });
  }
}

if (import.meta.main) {
  const [dir, rounds = "10", env = "{}"] = process.argv.slice(2);
  if (!dir) throw new Error("usage: serve-rounds.ts <checkpoint dir> [rounds] [extra env as JSON]");
  const extra = JSON.parse(env) as NodeJS.ProcessEnv;
  const o = { rounds: Number(rounds), streams: 64, env: { ...process.env, ...extra } };
  console.log(JSON.stringify(await serveRounds(dir, o)));
}
