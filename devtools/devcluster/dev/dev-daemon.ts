// The body of `tessera dev run` (and of the background process `tessera dev up` starts): the
// whole dev cluster in this process, with its kubeconfig, kubelet folders and process list under
// the dev folder and a state file announcing it. `stop` stops every pod process (each within its
// grace period, at most maxGraceSeconds), closes the server and removes the state file.
import { randomBytes } from "node:crypto";
import { mkdirSync } from "node:fs";
import { z } from "zod";
import { TesseraError } from "../../../services/kernel/errors.ts";
import type { Logger } from "../../../services/kernel/log.ts";
import { type DevCluster, startDevCluster } from "../dev-cluster.ts";
import { type DevState, devPaths, removeDevState, writeDevState } from "./dev-state.ts";

export const devOptionsSchema = z.object({
  dir: z.string().default(".tessera/dev"),
  host: z.string().default("127.0.0.1"),
  port: z.number().int().min(0).max(65535).default(0),
  /** Keep the cluster's objects in this file across restarts; in memory when absent. */
  stateFile: z.string().optional(),
  nodeName: z.string().default("tessera-node"),
  cpu: z.string().optional(),
  memory: z.string().optional(),
  gpus: z.number().int().nonnegative().default(0),
  podCidr: z.string().default("127.1.0.0/16"),
  /** `dev down` gives pods at most this long to stop after SIGTERM. */
  maxGraceSeconds: z.number().nonnegative().default(10),
});

export type DevOptions = z.input<typeof devOptionsSchema>;

export interface RunningDevCluster {
  readonly state: DevState;
  readonly cluster: DevCluster;
  stop(): Promise<void>;
}

export async function runDevCluster(input: DevOptions, log?: Logger): Promise<RunningDevCluster> {
  const parsed = devOptionsSchema.safeParse(input);
  if (!parsed.success) throw TesseraError.invalidArgument("tessera dev", z.prettifyError(parsed.error));
  const options = parsed.data;
  const paths = devPaths(options.dir);
  mkdirSync(paths.dir, { recursive: true });
  const clusterId = randomBytes(6).toString("hex");
  const cluster = await startDevCluster(
    {
      host: options.host,
      port: options.port,
      kubeconfigPath: paths.kubeconfig,
      ...(options.stateFile ? { stateFile: options.stateFile } : {}),
      node: {
        nodeName: options.nodeName,
        podCidr: options.podCidr,
        rootDir: paths.kubeletRoot,
        processFile: paths.processes,
        clusterId,
        capacity: {
          ...(options.cpu ? { cpu: options.cpu } : {}),
          ...(options.memory ? { memory: options.memory } : {}),
          "nvidia.com/gpu": options.gpus,
        },
      },
    },
    log ? { log } : {},
  );
  const state: DevState = {
    pid: process.pid,
    url: cluster.url,
    kubeconfig: paths.kubeconfig,
    clusterId,
    nodeName: options.nodeName,
    podCidr: options.podCidr,
    startedAt: new Date().toISOString(),
    ...(options.stateFile ? { stateFile: options.stateFile } : {}),
  };
  writeDevState(paths, state);
  let stopping: Promise<void> | undefined;
  return {
    state,
    cluster,
    stop: () => {
      stopping ??= cluster
        .close({ maxGraceSeconds: options.maxGraceSeconds })
        .finally(() => removeDevState(paths));
      return stopping;
    },
  };
}

/** What `tessera dev up` prints: where the cluster is and how to use kubectl with it. */
export function usageText(state: DevState): string {
  return [
    `Tessera dev cluster is up (pid ${state.pid}): ${state.url}`,
    `  node ${state.nodeName}, pod IPs from ${state.podCidr}${state.stateFile ? `, state kept in ${state.stateFile}` : ", state in memory"}`,
    "",
    "Use it with kubectl (1.31 or newer) or helm:",
    `  export KUBECONFIG=${state.kubeconfig}`,
    "  kubectl get nodes",
    "  kubectl apply -f my-app.yaml",
    "",
    "Pods run their container's command on this machine (the image is ignored), each on its own",
    "loopback IP (kubectl get pods -o wide). Stop everything with: tessera dev down",
    "",
  ].join("\n");
}
