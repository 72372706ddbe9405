// Configuration of the process kubelet, validated at start-up. Durations are milliseconds except
// where Kubernetes itself speaks in seconds.
import { randomBytes } from "node:crypto";
import os from "node:os";
import path from "node:path";
import { z } from "zod";
import { TesseraError } from "../../../services/kernel/errors.ts";
import { parseQuantity } from "../objects/quantity.ts";

const quantity = z
  .union([z.string(), z.number()])
  .refine((q) => parseQuantity(q) !== undefined, { message: "not a Kubernetes quantity" });

const POD_CIDR = /^127\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})\/(\d{1,2})$/;

export const kubeletConfigSchema = z.object({
  /** The Node this kubelet registers and runs the pods of. */
  nodeName: z.string().min(1).default("tessera-node"),
  /** Node capacity; allocatable is the same. cpu and memory default to this machine's. */
  capacity: z
    .object({
      cpu: quantity.optional(),
      memory: quantity.optional(),
      "nvidia.com/gpu": quantity.default(0),
      pods: quantity.default(110),
    })
    .catchall(quantity)
    .default({ "nvidia.com/gpu": 0, pods: 110 }),
  /** Extra labels of the Node. */
  labels: z.record(z.string(), z.string()).default({}),
  /** Loopback range pod IPs are taken from (Linux routes all of 127.0.0.0/8 to lo). */
  podCidr: z
    .string()
    .regex(POD_CIDR, "must be a range inside 127.0.0.0/8, e.g. 127.1.0.0/16")
    .default("127.1.0.0/16"),
  /** Logs, emptyDir and PVC folders live here. */
  rootDir: z.string().default(() => path.join(os.tmpdir(), `tessera-kubelet-${process.pid}`)),
  /** The cluster's DNS domain (names of pods of headless Services end in `.svc.<clusterDomain>`). */
  clusterDomain: z.string().min(1).default("cluster.local"),
  /**
   * The hosts-style file that stands in for cluster DNS (cluster-hosts.ts), named in every container's
   * TESSERA_HOSTS_FILE; default `<rootDir>/cluster-hosts`.
   */
  hostsFile: z.string().min(1).optional(),
  /** Crash-loop back-off: the first restart is immediate, then initial, doubling up to max. */
  backoff: z
    .object({
      initialMs: z.number().nonnegative().default(10_000),
      maxMs: z.number().nonnegative().default(300_000),
      /** A container that ran this long starts a fresh back-off sequence. */
      resetAfterMs: z.number().nonnegative().default(600_000),
    })
    .default({ initialMs: 10_000, maxMs: 300_000, resetAfterMs: 600_000 }),
  /** How soon a container whose env or volumes could not be prepared is tried again. */
  configRetryMs: z.number().positive().default(2_000),
  /**
   * How often a running pod's configMap and secret volumes are brought up to date with their objects
   * (a kubelet does it in its sync loop, about once a minute; a rotated API key file then reaches the
   * container without a restart).
   */
  volumeRefreshMs: z.number().positive().default(2_000),
  /** Host environment variables every container gets (containers share the host's file system). */
  inheritEnv: z.array(z.string()).default(["PATH", "HOME", "LANG", "LC_ALL", "TZ", "USER"]),
  /**
   * Put first on the inherited PATH: the folder of the Node that runs the cluster, so a container's
   * `node` is that Node and not an older one the host's PATH finds first (host-env.ts).
   */
  nodeBinDir: z
    .string()
    .min(1)
    .default(() => path.dirname(process.execPath)),
  /**
   * The API server's URL: a container that mounts its service account's token gets a kubeconfig
   * for it with that token (service-account-kubeconfig.ts) as KUBECONFIG.
   */
  apiServer: z.string().optional(),
  /** Variables every container gets (KUBERNETES_SERVICE_HOST ...); pod env wins. */
  podEnv: z.record(z.string(), z.string()).default({}),
  /** Identifies this cluster's processes (env TESSERA_DEV_CLUSTER) for cleanup after a crash. */
  clusterId: z.string().default(() => randomBytes(6).toString("hex")),
  /** Keep the list of running container processes here (for `tessera dev down`). */
  processFile: z.string().optional(),
  /** Log lines kept in memory per container instance (older lines remain in the log file). */
  maxLogLines: z.number().int().positive().default(20_000),
});

export type KubeletConfigInput = z.input<typeof kubeletConfigSchema>;
export type KubeletConfig = z.output<typeof kubeletConfigSchema>;

export function parseKubeletConfig(input: KubeletConfigInput): KubeletConfig {
  const parsed = kubeletConfigSchema.safeParse(input);
  if (!parsed.success) throw TesseraError.invalidArgument("kubelet config", z.prettifyError(parsed.error));
  return parsed.data;
}

/** The first address and the size of a pod CIDR. */
export function parsePodCidr(cidr: string): { base: number; size: number } {
  const match = POD_CIDR.exec(cidr);
  const octets = match ? [127, Number(match[1]), Number(match[2]), Number(match[3])] : [];
  const bits = Number(match?.[4]);
  if (!match || octets.some((o) => o > 255) || bits < 8 || bits > 30)
    throw TesseraError.invalidArgument("podCidr", `${cidr} is not a range inside 127.0.0.0/8 (/8 to /30)`);
  const address = octets.reduce((acc, o) => acc * 256 + o, 0);
  const size = 2 ** (32 - bits);
  return { base: address - (address % size), size };
}
