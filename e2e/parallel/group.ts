// A parallel replica as real processes: one `tessera serve` per member (stage × tensor rank) on free
// ports, wired by --peers; rank 0 serves tessera.v1.Inference. Resolves once every member reports
// SERVING on grpc.health.v1 (the group is wired).
import net from "node:net";
import { type Served, startServe } from "../../services/cli/child-process.ts";
import { waitUntilServing } from "../../services/worker/server/health-client.ts";

export interface Group {
  /** Rank 0: serves tessera.v1.Inference. */
  coordinator: Served;
  /** Every member by global rank (rank 0 first). */
  members: Served[];
  stop(): Promise<void>;
}

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

export async function startGroup(
  modelDir: string,
  layout: { stages: number; tensorSize: number },
  args: string[] = [],
): Promise<Group> {
  const size = layout.stages * layout.tensorSize;
  const ports: number[] = [];
  while (ports.length < size) {
    const port = await freePort();
    if (!ports.includes(port)) ports.push(port);
  }
  const peers = ports.map((p) => `127.0.0.1:${p}`).join(",");
  const started = ports.map((port, g) =>
    startServe(modelDir, [
      ...args,
      "--port",
      String(port),
      "--pipeline-stages",
      String(layout.stages),
      "--pipeline-stage",
      String(Math.floor(g / layout.tensorSize)),
      "--tensor-size",
      String(layout.tensorSize),
      "--tensor-rank",
      String(g % layout.tensorSize),
      "--peers",
      peers,
    ]),
  );
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
