// The process kubelet: registers its Node, and runs every pod bound to it as host processes with
// a loopback pod IP (one PodWorker per pod instance). It watches pods in process (ClusterApi) and
// handles each change off the watch's call stack: start new pods, finish the deletion of pods
// that have a deletionTimestamp (stop processes within the grace period, then delete the object),
// and stop the processes of pods that vanished. It serves `kubectl logs` (podLogSource), and keeps the
// cluster hosts file, the dev cluster's stand-in for cluster DNS (cluster-hosts.ts).
import { rmSync } from "node:fs";
import path from "node:path";
import { type Clock, systemClock } from "../../../services/kernel/clock.ts";
import { createLogger, type Logger } from "../../../services/kernel/log.ts";
import type { EventRecorder } from "../../../services/kube/event-recorder.ts";
import { keyOf, splitKey } from "../../../services/kube/kube-object.ts";
import { ReconcileLoop } from "../../../services/kube/reconcile-loop.ts";
import type { WatchHandle } from "../apiserver/cluster/api-types.ts";
import type { ClusterApi } from "../apiserver/cluster/cluster-api.ts";
import { statusCodeOf } from "../apiserver/core/api-status.ts";
import type { PodLogSource } from "../apiserver/http/pod-logs.ts";
import { clusterEventRecorder } from "../objects/cluster-events.ts";
import type { Pod } from "../objects/pod-types.ts";
import { NODES, PODS } from "../objects/refs.ts";
import { ClusterHosts, HOSTS_FILE_ENV, usesClusterDns } from "./cluster-hosts.ts";
import { inheritedEnv } from "./host-env.ts";
import { hostProcessLauncher, type ProcessLauncher } from "./host-process.ts";
import { type KubeletConfig, type KubeletConfigInput, parseKubeletConfig } from "./kubelet-config.ts";
import { NODE_IP, nodeObject, nodeView } from "./node-object.ts";
import { podRequests } from "./pod-fit.ts";
import { PodIpPool } from "./pod-ip-pool.ts";
import { podLogSource } from "./pod-log-source.ts";
import { KUBELET_MANAGER, type PodTokenIssuer, PodWorker } from "./pod-worker.ts";
import { checkProbe, type ProbeChecker } from "./probe-check.ts";
import { CLUSTER_ENV, ProcessRegistry } from "./process-registry.ts";

export interface KubeletDeps {
  api: ClusterApi;
  clock?: Clock;
  log?: Logger;
  launcher?: ProcessLauncher;
  checker?: ProbeChecker;
  events?: EventRecorder;
  /** Issues the token of a pod's service account (bound to the pod) for its token volume. */
  serviceAccountTokens?: PodTokenIssuer;
}

/** The kubelet's minimum grace period, used for pods that were force-deleted. */
const FORCED_GRACE_SECONDS = 2;

export class Kubelet {
  readonly config: KubeletConfig;
  readonly logs: PodLogSource;
  readonly #api: ClusterApi;
  readonly #clock: Clock;
  readonly #log: Logger;
  readonly #launcher: ProcessLauncher;
  readonly #tokens: PodTokenIssuer | undefined;
  readonly #checker: ProbeChecker;
  readonly #events: EventRecorder;
  readonly #ips: PodIpPool;
  readonly #processes: ProcessRegistry;
  readonly #loop: ReconcileLoop;
  readonly #hosts: ClusterHosts;
  readonly #workers = new Map<string, PodWorker>();
  readonly #finishing = new Set<Promise<void>>();
  #allocatable: Record<string, number> = {};
  #watch: WatchHandle | undefined;
  #stopped = false;

  constructor(config: KubeletConfigInput, deps: KubeletDeps) {
    this.config = parseKubeletConfig(config);
    this.#api = deps.api;
    this.#clock = deps.clock ?? systemClock;
    this.#log = deps.log ?? createLogger("devcluster-kubelet");
    this.#launcher = deps.launcher ?? hostProcessLauncher;
    this.#tokens = deps.serviceAccountTokens;
    this.#checker = deps.checker ?? checkProbe;
    this.#events =
      deps.events ?? clusterEventRecorder(deps.api, this.#clock, "kubelet", this.config.nodeName);
    this.#ips = new PodIpPool(this.config.podCidr);
    this.#processes = new ProcessRegistry(this.config.processFile);
    this.#loop = new ReconcileLoop("kubelet", (key) => this.#syncLogged(key), {
      clock: this.#clock,
      log: this.#log,
    });
    this.#hosts = new ClusterHosts(this.#api, {
      file: this.config.hostsFile ?? path.join(this.config.rootDir, "cluster-hosts"),
      domain: this.config.clusterDomain,
      clock: this.#clock,
      log: this.#log,
    });
    this.logs = podLogSource(
      {
        pod: (namespace, name) => this.#api.get(PODS, namespace, name) as Pod,
        runner: (pod, container) => this.#workers.get(pod.metadata.uid ?? "")?.runner(container),
      },
      this.#clock,
    );
  }

  get nodeName(): string {
    return this.config.nodeName;
  }

  /** Registers the Node and starts running the pods bound to it. */
  start(): void {
    this.#register();
    this.#hosts.start();
    this.#loop.start();
    this.#watch = this.#api.watch(PODS, {}, (event) => {
      const meta = event.object.metadata;
      if (event.type === "DELETED") this.#workers.get(meta.uid ?? "")?.update(event.object as Pod);
      this.#loop.queue.add(keyOf(meta.namespace, meta.name ?? ""));
    });
  }

  /** Resolves when no pod change is waiting to be handled (deletions may still wait for their grace period). */
  async idle(): Promise<void> {
    do {
      await this.#loop.idle();
      await this.#hosts.idle();
      await new Promise((resolve) => setImmediate(resolve));
    } while (this.#loop.busy);
  }

  /** The worker running a pod instance (tests look at its containers). */
  worker(uid: string): PodWorker | undefined {
    return this.#workers.get(uid);
  }

  /** The hosts-style file that stands in for cluster DNS (TESSERA_HOSTS_FILE in containers). */
  get hostsFile(): string {
    return this.#hosts.file;
  }

  /** The pids of every running container process. */
  get pids(): number[] {
    return this.#processes.pids;
  }

  /**
   * Stops every container (within each pod's grace period, or graceSeconds when given, at most
   * maxGraceSeconds) and leaves the pod objects as they are. PVC folders stay; pod folders go.
   */
  async stop(options: { graceSeconds?: number; maxGraceSeconds?: number } = {}): Promise<void> {
    this.#stopped = true;
    this.#watch?.stop();
    void this.#loop.stop();
    this.#hosts.stop();
    const workers = [...this.#workers.values()];
    const cap = options.maxGraceSeconds ?? Number.POSITIVE_INFINITY;
    await Promise.all(
      workers.map((w) =>
        w.terminate(Math.min(cap, options.graceSeconds ?? this.#graceOf(this.#podOf(w) ?? w.pod))),
      ),
    );
    await Promise.all([...this.#finishing]);
    for (const worker of workers) worker.cleanup();
    this.#workers.clear();
    rmSync(path.join(this.config.rootDir, "pods"), { recursive: true, force: true });
  }

  #register(): void {
    const node = nodeObject(this.config, this.#clock.now());
    this.#allocatable = nodeView(node).allocatable;
    try {
      const existing = this.#api.get(NODES, "", this.nodeName);
      this.#api.update(
        NODES,
        "",
        this.nodeName,
        { ...existing, status: node["status"] },
        {
          subresource: "status",
          fieldManager: KUBELET_MANAGER,
        },
      );
    } catch (err) {
      if (statusCodeOf(err) !== 404) throw err;
      this.#api.create(NODES, "", node, { fieldManager: KUBELET_MANAGER });
    }
  }

  #podOf(worker: PodWorker): Pod | undefined {
    try {
      const pod = this.#api.get(PODS, worker.namespace, worker.name) as Pod;
      return pod.metadata.uid === worker.uid ? pod : undefined;
    } catch {
      return undefined;
    }
  }

  #graceOf(pod: Pod): number {
    return pod.metadata.deletionGracePeriodSeconds ?? pod.spec.terminationGracePeriodSeconds ?? 30;
  }

  /**
   * The grace period for a pod whose object is gone. Gone without a graceful deletion means it was
   * force-deleted (`--grace-period=0 --force`): like the kubelet, give it at most 2 seconds.
   */
  #vanishedGrace(worker: PodWorker): number {
    const last = worker.pod;
    const grace = this.#graceOf(last);
    return last.metadata.deletionTimestamp ? grace : Math.min(grace, FORCED_GRACE_SECONDS);
  }

  /** Syncs the pod a key names; a failure is logged, and the pod's next change syncs it again. */
  #syncLogged(key: string): undefined {
    try {
      this.#sync(key);
    } catch (err) {
      this.#log.warn({ err, pod: key }, "pod sync failed");
    }
    return undefined;
  }

  #sync(key: string): void {
    if (this.#stopped) return;
    const { namespace, name } = splitKey(key);
    let pod: Pod | undefined;
    try {
      pod = this.#api.get(PODS, namespace, name) as Pod;
    } catch (err) {
      if (statusCodeOf(err) !== 404) throw err;
    }
    const mine = pod?.spec.nodeName === this.nodeName ? pod : undefined;
    for (const worker of this.#workers.values()) {
      if (worker.namespace === namespace && worker.name === name && worker.uid !== mine?.metadata.uid)
        this.#finish(worker, undefined);
    }
    if (!mine) return;
    const worker = this.#workers.get(mine.metadata.uid ?? "");
    if (mine.metadata.deletionTimestamp) {
      if (worker) this.#finish(worker, mine);
      else this.#remove(mine);
      return;
    }
    if (worker) {
      worker.update(mine);
      return;
    }
    const phase = mine.status?.phase;
    if (phase === "Succeeded" || phase === "Failed") return;
    this.#startPod(mine);
  }

  #startPod(pod: Pod): void {
    const podIP = pod.spec.hostNetwork ? NODE_IP : this.#ips.allocate(pod.status?.podIP);
    if (!podIP) {
      this.#log.error({ pod: pod.metadata.name }, "no pod IP left in the node's pod CIDR");
      this.#events.record(
        pod,
        "Warning",
        "FailedCreatePodSandBox",
        `no IP address left in ${this.config.podCidr}`,
      );
      return;
    }
    const worker = new PodWorker(
      pod,
      { podIP, gpus: this.#takeGpus(podRequests(pod.spec)["nvidia.com/gpu"] ?? 0) },
      {
        api: this.#api,
        clock: this.#clock,
        log: this.#log,
        config: this.config,
        launcher: this.#launcher,
        ...(this.#tokens ? { serviceAccountTokens: this.#tokens } : {}),
        checker: this.#checker,
        events: this.#events,
        hostIP: NODE_IP,
        allocatable: this.#allocatable,
        baseEnv: this.#baseEnv(pod),
        onProcess: (pid, running) => this.#processes.set(pid, running),
      },
    );
    this.#workers.set(worker.uid, worker);
    worker.start();
  }

  #baseEnv(pod: Pod): Record<string, string> {
    const env = inheritedEnv(this.config.inheritEnv, this.config.nodeBinDir, process.env);
    if (usesClusterDns(pod)) env[HOSTS_FILE_ENV] = this.#hosts.file;
    return { ...env, ...this.config.podEnv, [CLUSTER_ENV]: this.config.clusterId };
  }

  #takeGpus(count: number): number[] {
    const total = this.#allocatable["nvidia.com/gpu"] ?? 0;
    const taken = new Set([...this.#workers.values()].flatMap((w) => w.gpus));
    const free = Array.from({ length: total }, (_, i) => i).filter((i) => !taken.has(i));
    return free.slice(0, count);
  }

  /** Stops a pod instance's processes, then deletes its object (if it is still that instance) and frees its IP. */
  #finish(worker: PodWorker, pod: Pod | undefined): void {
    if (worker.terminating) return;
    const live = pod ?? this.#podOf(worker);
    const grace = live ? this.#graceOf(live) : this.#vanishedGrace(worker);
    const done = worker.terminate(grace).then(() => {
      worker.syncStatus();
      if (pod) this.#remove(pod);
      worker.cleanup();
      if (worker.podIP !== NODE_IP) this.#ips.release(worker.podIP);
      this.#workers.delete(worker.uid);
      this.#finishing.delete(done);
    });
    this.#finishing.add(done);
  }

  #remove(pod: Pod): void {
    try {
      this.#api.delete(PODS, pod.metadata.namespace ?? "", pod.metadata.name ?? "", {
        gracePeriodSeconds: 0,
        preconditions: { uid: pod.metadata.uid ?? "" },
      });
    } catch (err) {
      const code = statusCodeOf(err);
      if (code !== 404 && code !== 409) throw err;
    }
  }
}
