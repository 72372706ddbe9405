// `tessera dev up | down | status | run`: a local Kubernetes-API-compatible cluster (API server,
// scheduler, process kubelet, built-in controllers) for kubectl and helm, without Docker. `up`
// runs `dev run` in the background and returns once the cluster answers; `down` stops it and
// every pod process it started.
import path from "node:path";
import { Command } from "commander";
import { createLogger } from "../kernel/log.ts";
import { nonNegativeIntegerFlag, numberFlag } from "./flags.ts";

interface ClusterFlags {
  dir: string;
  host: string;
  port: number;
  stateFile?: string;
  nodeName: string;
  cpu?: string;
  memory?: string;
  gpus: number;
  podCidr: string;
  maxGraceSeconds: number;
}

const DIR_HELP = "folder for the cluster's kubeconfig, state, logs and pod folders";

function withClusterFlags(command: Command): Command {
  return command
    .option("--dir <dir>", DIR_HELP, ".tessera/dev")
    .option("--host <host>", "address the API server listens on", "127.0.0.1")
    .option("--port <port>", "API server port (0 picks a free one)", nonNegativeIntegerFlag, 0)
    .option(
      "--state-file <file>",
      "keep the cluster's objects in this file across restarts (default: in memory)",
    )
    .option("--node-name <name>", "name of the node", "tessera-node")
    .option("--cpu <cores>", "node cpu capacity (default: this machine's cores)")
    .option("--memory <quantity>", "node memory capacity, e.g. 16Gi (default: this machine's memory)")
    .option("--gpus <n>", "nvidia.com/gpu capacity of the node", nonNegativeIntegerFlag, 0)
    .option("--pod-cidr <cidr>", "loopback range pod IPs come from", "127.1.0.0/16")
    .option(
      "--max-grace-seconds <s>",
      "longest time pods get to stop when the cluster stops",
      numberFlag,
      10,
    );
}

/** The flags again, as `dev run` arguments for the background process. */
function runArgs(flags: ClusterFlags): string[] {
  const args = ["--dir", path.resolve(flags.dir), "--host", flags.host, "--port", String(flags.port)];
  args.push("--node-name", flags.nodeName, "--gpus", String(flags.gpus), "--pod-cidr", flags.podCidr);
  args.push("--max-grace-seconds", String(flags.maxGraceSeconds));
  if (flags.stateFile) args.push("--state-file", path.resolve(flags.stateFile));
  if (flags.cpu) args.push("--cpu", flags.cpu);
  if (flags.memory) args.push("--memory", flags.memory);
  return args;
}

function daemonOptions(flags: ClusterFlags) {
  return {
    dir: flags.dir,
    host: flags.host,
    port: flags.port,
    nodeName: flags.nodeName,
    gpus: flags.gpus,
    podCidr: flags.podCidr,
    maxGraceSeconds: flags.maxGraceSeconds,
    ...(flags.stateFile ? { stateFile: path.resolve(flags.stateFile) } : {}),
    ...(flags.cpu ? { cpu: flags.cpu } : {}),
    ...(flags.memory ? { memory: flags.memory } : {}),
  };
}

function upCommand(): Command {
  return withClusterFlags(new Command("up").summary("Start the dev cluster in the background")).action(
    async (flags: ClusterFlags) => {
      const { devUp } = await import("../../devtools/devcluster/dev/dev-control.ts");
      const { usageText } = await import("../../devtools/devcluster/dev/dev-daemon.ts");
      const main = path.join(import.meta.dirname, "main.ts");
      const result = await devUp(flags.dir, process.execPath, [main, "dev", "run", ...runArgs(flags)]);
      if (result.alreadyRunning) process.stdout.write("The dev cluster is already running.\n");
      process.stdout.write(usageText(result.state));
    },
  );
}

function runCommand(): Command {
  return withClusterFlags(
    new Command("run").summary("Run the dev cluster in the foreground until SIGINT/SIGTERM"),
  ).action(async (flags: ClusterFlags) => {
    const { runDevCluster, usageText } = await import("../../devtools/devcluster/dev/dev-daemon.ts");
    const running = await runDevCluster(daemonOptions(flags), createLogger("devcluster"));
    let stopping = false;
    const stop = () => {
      if (stopping) return;
      stopping = true;
      void running.stop().finally(() => process.exit(0));
    };
    process.on("SIGTERM", stop);
    process.on("SIGINT", stop);
    if (process.send) {
      process.send({ type: "ready", state: running.state }, () => process.disconnect?.());
    } else process.stdout.write(usageText(running.state));
    await new Promise(() => {});
  });
}

function downCommand(): Command {
  return new Command("down")
    .summary("Stop the dev cluster and every process it started")
    .option("--dir <dir>", DIR_HELP, ".tessera/dev")
    .action(async (flags: { dir: string }) => {
      const { devDown } = await import("../../devtools/devcluster/dev/dev-control.ts");
      const result = await devDown(flags.dir);
      if (result.stopped !== undefined)
        process.stdout.write(`Stopped the dev cluster (pid ${result.stopped}).\n`);
      else process.stdout.write("No dev cluster was running.\n");
      if (result.leftovers.length > 0)
        process.stdout.write(`Killed ${result.leftovers.length} pod process(es) left behind.\n`);
    });
}

function statusCommand(): Command {
  return new Command("status")
    .summary("Say whether the dev cluster runs, and where")
    .option("--dir <dir>", DIR_HELP, ".tessera/dev")
    .action(async (flags: { dir: string }) => {
      const { devStatus } = await import("../../devtools/devcluster/dev/dev-control.ts");
      const state = devStatus(flags.dir);
      if (!state) {
        process.stdout.write("No dev cluster is running.\n");
        return;
      }
      process.stdout.write(
        `Running (pid ${state.pid}) at ${state.url}\nexport KUBECONFIG=${state.kubeconfig}\n`,
      );
    });
}

export function devCommand(): Command {
  const dev = new Command("dev")
    .summary("Local Kubernetes-compatible cluster for kubectl and helm (no Docker)")
    .description(
      "A local cluster for kubectl and helm: a Kubernetes-API-compatible server, a scheduler, a process " +
        "kubelet (each pod's container command runs on this machine on its own loopback IP; images are " +
        "ignored) and the built-in controllers (Deployments, ReplicaSets, StatefulSets, EndpointSlices).",
    )
    .addCommand(upCommand())
    .addCommand(downCommand())
    .addCommand(statusCommand())
    .addCommand(runCommand());
  return dev;
}
