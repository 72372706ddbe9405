// A parallel replica as real processes: one `tessera serve` per member (stage × tensor rank) on free
// ports, told its place by flags, or by the environment the operator sets on a shard's pod
// (operator/placement/shard-env.ts); rank 0 serves tessera.v1.Inference. Resolves once every member
// reports SERVING on grpc.health.v1 (the group is wired).
import { spawn } from "node:child_process";
import { once } from "node:events";
import path from "node:path";
import { createInterface } from "node:readline";
import { type Served, startServe } from "../../services/cli/child-process.ts";
import { freePort } from "../../services/kernel/free-port.ts";
import { waitUntilServing } from "../../services/rpc/health-client.ts";

export interface Group {
  /** Rank 0: serves tessera.v1.Inference. */
  coordinator: Served;
  /** Every member by global rank (rank 0 first). */
  members: Served[];
  stop(): Promise<void>;
}

export async function startGroup(
  modelDir: string,
  layout: { stages: number; tensorSize: number },
  args: string[] = [],
  configuredBy: "flags" | "environment" = "flags",
): Promise<Group> {
  const size = layout.stages * layout.tensorSize;
  const ports: number[] = [];
  while (ports.length < size) {
    const port = await freePort();
    if (!ports.includes(port)) ports.push(port);
  }
  const peers = ports.map((p) => `127.0.0.1:${p}`).join(",");
  const started = ports.map((port, g) => {
    const stage = Math.floor(g / layout.tensorSize);
    const rank = g % layout.tensorSize;
    if (configuredBy === "environment")
      return serveWithEnv(modelDir, [...args, "--port", String(port)], {
        TESSERA_STAGE: String(stage),
        TESSERA_NUM_STAGES: String(layout.stages),
        TESSERA_TENSOR_RANK: String(rank),
        TESSERA_TENSOR_SIZE: String(layout.tensorSize),
        TESSERA_RANK: String(g),
        TESSERA_WORLD_SIZE: String(size),
        TESSERA_PEERS: peers,
      });
    return startServe(modelDir, [
      ...args,
      "--port",
      String(port),
      ...["--pipeline-stages", String(layout.stages), "--pipeline-stage", String(stage)],
      ...["--tensor-size", String(layout.tensorSize), "--tensor-rank", String(rank)],
      ...["--peers", peers],
    ]);
  });
  const settled = await Promise.allSettled(started);
  const members = settled.flatMap((s) => (s.status === "fulfilled" ? [s.value] : []));
  const stop = async () => {
    for (const m of members) if (m.child.exitCode === null) m.child.kill("SIGKILL");
    await Promise.all(members.map((m) => m.exited));
  };
  const failed = settled.find((s) => s.status === "rejected");
  if (failed) {
    await stop();
    throw (failed as PromiseRejectedResult).reason;
  }
  await Promise.all(members.map((m) => waitUntilServing(m.address, 60_000)));
  return { coordinator: members[0]!, members, stop };
}

const MAIN = path.resolve(import.meta.dirname, "../../services/cli/main.ts");

/** `tessera serve` with extra environment; resolves once it logs the port it listens on. */
async function serveWithEnv(modelDir: string, args: string[], env: Record<string, string>): Promise<Served> {
  const child = spawn(process.execPath, [MAIN, "serve", "--model", modelDir, ...args], {
    env: { ...process.env, ...env },
    stdio: ["ignore", "ignore", "pipe"],
  });
  const exited = once(child, "exit").then(([code]) => code as number | null);
  const logs: Record<string, unknown>[] = [];
  const port = new Promise<number>((resolve, reject) => {
    createInterface({ input: child.stderr }).on("line", (line) => {
      let log: Record<string, unknown>;
      try {
        log = JSON.parse(line) as Record<string, unknown>;
      } catch {
        log = { msg: line };
      }
      logs.push(log);
      if (log["msg"] === "serving") resolve(Number(log["port"]));
    });
    exited.then((code) =>
      reject(new Error(`tessera serve exited (${code}) before serving: ${JSON.stringify(logs)}`)),
    );
  });
  return { address: `127.0.0.1:${await port}`, child, exited, logs };
}
