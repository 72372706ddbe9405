// The processes a router benchmark runs: tiny workers and `tessera router` processes, each handed
// back once it logs the ports it listens on (and, for a router, once /ready answers 200).
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { createInterface } from "node:readline";
import { setTimeout as delay } from "node:timers/promises";
import { waitUntilServing } from "../../../services/rpc/health-client.ts";

const ROOT = path.resolve(import.meta.dirname, "../../..");

export interface Proc {
  child: ChildProcess;
  log: Record<string, unknown>;
  stop(): Promise<void>;
}

export interface Worker extends Proc {
  address: string;
}

export interface RouterProc extends Proc {
  grpcAddress: string;
  httpUrl: string;
  metricsUrl: string;
  endpointsFile: string;
}

/** Every process a benchmark started: none outlives it, even when it fails half way. */
const children = new Set<ChildProcess>();
process.once("exit", () => {
  for (const child of children) child.kill("SIGKILL");
});

/** How a benchmark process is started: node flags, environment, stdout, and the cores it runs on. */
export interface SpawnOptions {
  nodeArgs?: string[];
  env?: NodeJS.ProcessEnv;
  stdout?: "ignore" | number;
  /**
   * Cores (taskset's list) the process runs on from its first instruction, so it sees only those
   * (os.availableParallelism(), what the router's GC settings follow); unpinned where taskset fails.
   */
  cores?: string;
}

async function spawnUntil(args: string[], msg: string, options: SpawnOptions = {}): Promise<Proc> {
  const node = [...(options.nodeArgs ?? []), ...args];
  const pinned = options.cores !== undefined && hasTaskset();
  const child = spawn(
    pinned ? "taskset" : process.execPath,
    pinned ? ["-c", options.cores!, process.execPath, ...node] : node,
    {
      cwd: ROOT,
      stdio: ["ignore", options.stdout ?? "ignore", "pipe"],
      env: { ...process.env, ...options.env },
    },
  );
  children.add(child);
  const exited = once(child, "exit").finally(() => children.delete(child));
  const lines: string[] = [];
  const log = await new Promise<Record<string, unknown>>((resolve, reject) => {
    createInterface({ input: child.stderr! }).on("line", (line) => {
      lines.push(line);
      try {
        const parsed = JSON.parse(line) as Record<string, unknown>;
        if (parsed["msg"] === msg) resolve(parsed);
      } catch {}
    });
    exited.then(() => reject(new Error(`${args.join(" ")} exited:\n${lines.join("\n")}`)));
  });
  return {
    child,
    log,
    stop: async () => {
      if (child.exitCode === null) child.kill("SIGKILL");
      await exited;
    },
  };
}

export async function startWorker(
  modelDir: string,
  engine: Record<string, unknown>,
  threads: number,
): Promise<Worker> {
  const config = JSON.stringify({ modelDir, engine, threads });
  const proc = await spawnUntil([path.join(import.meta.dirname, "worker-main.ts"), config], "serving");
  const address = `127.0.0.1:${proc.log["port"]}`;
  await waitUntilServing(address, 60_000);
  return { ...proc, address };
}

/** A bare pass-through proxy to one worker (bare-proxy.ts): the floor under the router's overhead. */
export async function startBareProxy(
  worker: Worker,
  options: SpawnOptions = {},
): Promise<Proc & { address: string }> {
  const proc = await spawnUntil(
    [path.join(import.meta.dirname, "bare-proxy.ts"), worker.address],
    "proxying",
    options,
  );
  return { ...proc, address: `127.0.0.1:${proc.log["port"]}` };
}

export function writeEndpoints(file: string, workers: readonly Worker[]): void {
  writeFileSync(
    file,
    JSON.stringify({ endpoints: workers.map((w, i) => ({ name: `worker-${i}`, address: w.address })) }),
  );
}

export async function startRouter(
  modelDir: string,
  workers: readonly Worker[],
  config: Record<string, unknown>,
  options: SpawnOptions = {},
): Promise<RouterProc> {
  const dir = mkdtempSync(path.join(os.tmpdir(), "tessera-bench-router-"));
  const endpointsFile = path.join(dir, "endpoints.json");
  writeEndpoints(endpointsFile, workers);
  const file = path.join(dir, "router.json");
  writeFileSync(
    file,
    JSON.stringify({
      grpcPort: 0,
      httpPort: 0,
      metricsPort: 0,
      models: [{ id: path.basename(modelDir), tokenizer: modelDir }],
      discovery: { type: "static", file: endpointsFile, pollMs: 100 },
      ...config,
    }),
  );
  const proc = await spawnUntil(
    [path.join(ROOT, "services/cli/main.ts"), "router", "--config", file],
    "routing",
    options,
  );
  const httpUrl = `http://127.0.0.1:${proc.log["httpPort"]}`;
  for (
    let i = 0;
    !(await fetch(`${httpUrl}/ready`).then(
      (r) => r.ok,
      () => false,
    ));
    i++
  ) {
    if (i > 600) throw new Error("the router did not become ready");
    await delay(50);
  }
  return {
    ...proc,
    grpcAddress: `127.0.0.1:${proc.log["grpcPort"]}`,
    httpUrl,
    metricsUrl: `http://127.0.0.1:${proc.log["metricsPort"]}/metrics`,
    endpointsFile,
  };
}

/** Sum of a Prometheus series over the lines matching `labels`. */
export async function metric(
  url: string,
  name: string,
  labels: Record<string, string> = {},
): Promise<number> {
  const text = await (await fetch(url)).text();
  let total = 0;
  for (const line of text.split("\n")) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    if (Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`)))
      total += Number(line.split(" ").at(-1));
  }
  return total;
}

/**
 * Pins a process (all its threads) to some cores with taskset, so the processes of a measurement do
 * not take CPU from each other; false where taskset is missing or fails (the run goes on unpinned).
 */
export function pin(pid: number, cores: string): boolean {
  if (!hasTaskset()) return false;
  try {
    execFileSync("taskset", ["-a", "-p", "-c", cores, String(pid)], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

let tasksetFound: boolean | undefined;
function hasTaskset(): boolean {
  if (tasksetFound === undefined) {
    try {
      execFileSync("taskset", ["-p", String(process.pid)], { stdio: "ignore" });
      tasksetFound = true;
    } catch {
      tasksetFound = false;
    }
  }
  return tasksetFound;
}
