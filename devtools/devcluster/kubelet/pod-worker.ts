// Runs one pod on this node: takes a pod IP, prepares its volumes, runs its init containers one
// after the other, then all its containers, and keeps the pod's status in the API true as they
// change. `terminate` stops every container within the grace period; `cleanup` frees the IP and
// removes the pod's folder.
import { rmSync } from "node:fs";
import path from "node:path";
import type { Clock } from "../../../services/kernel/clock.ts";
import type { Logger } from "../../../services/kernel/log.ts";
import type { EventRecorder } from "../../../services/kube/event-recorder.ts";
import type { ClusterApi } from "../apiserver/cluster/cluster-api.ts";
import { statusCodeOf } from "../apiserver/core/api-status.ts";
import { jsonEqual } from "../apiserver/core/json-object.ts";
import type { Container, Pod } from "../objects/pod-types.ts";
import { CONFIGMAPS, PODS, SECRETS } from "../objects/refs.ts";
import { containerLaunch } from "./container-launch.ts";
import { ContainerRunner } from "./container-runner.ts";
import type { ProcessLauncher } from "./host-process.ts";
import type { KubeletConfig } from "./kubelet-config.ts";
import { podStatus } from "./pod-status.ts";
import type { ProbeChecker } from "./probe-check.ts";
import type { ProjectionSources } from "./projected-volume.ts";
import { serviceAccountVolumeDir, writeServiceAccountKubeconfig } from "./service-account-kubeconfig.ts";
import { prepareVolumes, refreshVolumes } from "./volume-paths.ts";

export const KUBELET_MANAGER = "kubelet";

export interface PodWorkerDeps {
  api: ClusterApi;
  clock: Clock;
  log: Logger;
  config: KubeletConfig;
  launcher: ProcessLauncher;
  checker: ProbeChecker;
  events: EventRecorder;
  hostIP: string;
  allocatable: Record<string, number>;
  /** The node's variables for every container (inherited host env, cluster address). */
  baseEnv: Record<string, string>;
  onProcess: (pid: number, running: boolean) => void;
  serviceAccountTokens?: PodTokenIssuer;
}

/** Issues a token of the pod's service account, bound to the pod; undefined when it cannot. */
export type PodTokenIssuer = (
  pod: Pod,
  request: { audience?: string; expirationSeconds: number },
) => string | undefined;

export interface PodAddress {
  podIP: string;
  /** GPU indices this pod holds (CUDA_VISIBLE_DEVICES of its containers). */
  gpus: number[];
}

export class PodWorker {
  readonly uid: string;
  readonly namespace: string;
  readonly name: string;
  readonly podIP: string;
  readonly gpus: number[];
  readonly #deps: PodWorkerDeps;
  readonly #dir: string;
  readonly #startTime: number;
  #pod: Pod;
  #init: ContainerRunner[] = [];
  #main: ContainerRunner[] = [];
  #volumes = new Map<string, string>();
  #mounted = false;
  readonly #started = new Set<ContainerRunner>();
  #syncQueued = false;
  #terminating: Promise<void> | undefined;
  #cancelRefresh: (() => void) | undefined;

  constructor(pod: Pod, address: PodAddress, deps: PodWorkerDeps) {
    this.#pod = pod;
    this.uid = pod.metadata.uid ?? "";
    this.namespace = pod.metadata.namespace ?? "default";
    this.name = pod.metadata.name ?? "";
    this.podIP = address.podIP;
    this.gpus = address.gpus;
    this.#deps = deps;
    this.#dir = path.join(deps.config.rootDir, "pods", `${this.namespace}_${this.name}_${this.uid}`);
    this.#startTime = deps.clock.now();
  }

  /** The latest pod object seen. */
  get pod(): Pod {
    return this.#pod;
  }

  get terminating(): boolean {
    return this.#terminating !== undefined;
  }

  /** The runner of a container (or init container) by name. */
  runner(container: string): ContainerRunner | undefined {
    return [...this.#main, ...this.#init].find((r) => r.name === container);
  }

  get containerNames(): string[] {
    return this.#pod.spec.containers.map((c) => c.name);
  }

  start(): void {
    this.#mountVolumes();
    this.#refreshVolumesLater();
    this.#init = (this.#pod.spec.initContainers ?? []).map((c) => this.#runner(c, true));
    this.#main = this.#pod.spec.containers.map((c) => this.#runner(c, false));
    this.#advance();
    this.#scheduleSync();
  }

  /** Takes the latest pod object (labels, deletion); containers do not change once started. */
  update(pod: Pod): void {
    if (pod.metadata.uid === this.uid) this.#pod = pod;
  }

  /** Stops every container (SIGTERM, SIGKILL after graceSeconds); resolves when all are gone. */
  terminate(graceSeconds: number): Promise<void> {
    this.#cancelRefresh?.();
    this.#cancelRefresh = undefined;
    if (!this.#terminating) {
      const graceMs = Math.max(0, graceSeconds) * 1000;
      for (const runner of [...this.#main, ...this.#init])
        if (runner.running) this.#event("Normal", "Killing", `Stopping container ${runner.name}`);
      this.#terminating = Promise.all([...this.#main, ...this.#init].map((r) => r.stop(graceMs))).then(
        () => {},
      );
    }
    return this.#terminating;
  }

  /** Removes the pod's folder (emptyDir volumes, logs). */
  cleanup(): void {
    this.#cancelRefresh?.();
    rmSync(this.#dir, { recursive: true, force: true });
  }

  #runner(container: Container, init: boolean): ContainerRunner {
    const gpuEnv = this.#gpuEnv(container);
    return new ContainerRunner(container, {
      clock: this.#deps.clock,
      launcher: this.#deps.launcher,
      checker: this.#deps.checker,
      backoff: this.#deps.config.backoff,
      configRetryMs: this.#deps.config.configRetryMs,
      maxLogLines: this.#deps.config.maxLogLines,
      logDir: path.join(this.#dir, "logs", container.name),
      restartPolicy: this.#pod.spec.restartPolicy ?? "Always",
      init,
      podIP: this.podIP,
      graceSeconds: this.#pod.spec.terminationGracePeriodSeconds ?? 30,
      prepare: () =>
        containerLaunch({
          pod: this.#pod,
          container,
          facts: { podIP: this.podIP, hostIP: this.#deps.hostIP, allocatable: this.#deps.allocatable },
          sources: this.#sources(),
          baseEnv: {
            ...this.#deps.baseEnv,
            ...this.#serviceAccountEnv(container),
            HOSTNAME: this.#pod.spec.hostname ?? this.name,
            TMPDIR: path.join(this.#dir, "tmp"),
            ...gpuEnv,
          },
          volumes: this.#volumes,
          defaultWorkingDir: process.cwd(),
        }),
      onChange: () => {
        this.#advance();
        this.#scheduleSync();
      },
      event: (type, reason, message) => this.#event(type, reason, message),
      onProcess: this.#deps.onProcess,
    });
  }

  /** KUBECONFIG for a container that mounts its service account's token (service-account-kubeconfig.ts). */
  #serviceAccountEnv(container: Container): Record<string, string> {
    const server = this.#deps.config.apiServer;
    const dir = serviceAccountVolumeDir(container, this.#volumes);
    if (!server || dir === undefined) return {};
    return { KUBECONFIG: writeServiceAccountKubeconfig(dir, server) };
  }

  /** Prepares the pod's volumes; on failure (a missing ConfigMap, say) an event, and a retry at the next refresh. */
  #mountVolumes(): void {
    const volumes = prepareVolumes(
      this.#pod,
      { podDir: this.#dir, claimsDir: path.join(this.#deps.config.rootDir, "volumes") },
      this.#sources(),
    );
    this.#mounted = volumes.value !== undefined;
    if (volumes.value) this.#volumes = volumes.value;
    else this.#event("Warning", "FailedMount", volumes.error.message);
  }

  /** Keeps the pod's configMap, secret and projected volumes up to date (or mounts them once they can be), until it terminates. */
  #refreshVolumesLater(): void {
    if (this.#terminating) return;
    this.#cancelRefresh = this.#deps.clock.setTimer(this.#deps.config.volumeRefreshMs, () => {
      try {
        if (!this.#mounted) this.#mountVolumes();
        else refreshVolumes(this.#pod, this.#volumes, this.#sources());
      } catch (err) {
        this.#deps.log.warn({ pod: this.name, err: String(err) }, "volume refresh failed");
      }
      this.#refreshVolumesLater();
    });
  }

  /** Devices for a container that asks for nvidia.com/gpu, none for the others (when the node has GPUs). */
  #gpuEnv(container: Container): Record<string, string> {
    if ((this.#deps.allocatable["nvidia.com/gpu"] ?? 0) <= 0) return {};
    let offset = 0;
    for (const c of this.#pod.spec.containers) {
      const count = Number(c.resources?.limits?.["nvidia.com/gpu"] ?? 0);
      if (c === container) {
        const devices = this.gpus.slice(offset, offset + count).join(",");
        return { CUDA_VISIBLE_DEVICES: devices, NVIDIA_VISIBLE_DEVICES: devices || "void" };
      }
      offset += count;
    }
    return { CUDA_VISIBLE_DEVICES: "", NVIDIA_VISIBLE_DEVICES: "void" };
  }

  /** Starts the next init container, or the containers once every init container succeeded. */
  #advance(): void {
    if (this.#terminating) return;
    const pending = this.#init.find((r) => !(r.finished && r.exitCode === 0));
    if (pending) {
      if (!pending.running && !pending.finished && !this.#started.has(pending)) this.#startRunner(pending);
      return;
    }
    for (const runner of this.#main) if (!this.#started.has(runner)) this.#startRunner(runner);
  }

  #startRunner(runner: ContainerRunner): void {
    this.#started.add(runner);
    runner.start();
  }

  #sources(): ProjectionSources {
    const { api } = this.#deps;
    const read = (ref: typeof CONFIGMAPS, name: string) => {
      try {
        return api.get(ref, this.namespace, name);
      } catch {
        return undefined;
      }
    };
    const tokens = this.#deps.serviceAccountTokens;
    return {
      now: () => this.#deps.clock.now(),
      ...(tokens ? { serviceAccountToken: (request) => tokens(this.#pod, request) } : {}),
      configMap: (name) => {
        const map = read(CONFIGMAPS, name);
        if (!map) return undefined;
        const data = { ...((map["data"] as Record<string, string> | undefined) ?? {}) };
        for (const [k, v] of Object.entries((map["binaryData"] as Record<string, string> | undefined) ?? {}))
          data[k] = Buffer.from(v, "base64").toString("utf8");
        return data;
      },
      secret: (name) => {
        const secret = read(SECRETS, name);
        if (!secret) return undefined;
        const decoded: Record<string, string> = {};
        for (const [k, v] of Object.entries((secret["data"] as Record<string, string> | undefined) ?? {}))
          decoded[k] = Buffer.from(v, "base64").toString("utf8");
        return decoded;
      },
    };
  }

  #event(type: "Normal" | "Warning", reason: string, message: string): void {
    this.#deps.events.record(this.#pod, type, reason, message);
  }

  #scheduleSync(): void {
    if (this.#syncQueued) return;
    this.#syncQueued = true;
    setImmediate(() => {
      this.#syncQueued = false;
      this.syncStatus();
    });
  }

  /** Writes the pod's status when it changed. */
  syncStatus(): void {
    const { api, clock, log } = this.#deps;
    try {
      const current = api.get(PODS, this.namespace, this.name) as Pod;
      if (current.metadata.uid !== this.uid) return;
      const status = podStatus(
        current,
        {
          hostIP: this.#deps.hostIP,
          podIP: this.podIP,
          startTime: this.#startTime,
          initStatuses: this.#init.map((r) => r.status()),
          statuses: this.#main.map((r) => r.status()),
        },
        clock.now(),
      );
      if (jsonEqual(status, current.status)) return;
      api.update(
        PODS,
        this.namespace,
        this.name,
        { ...current, status },
        {
          subresource: "status",
          fieldManager: KUBELET_MANAGER,
        },
      );
    } catch (err) {
      if (statusCodeOf(err) !== 404)
        log.warn({ err, pod: `${this.namespace}/${this.name}` }, "pod status update failed");
    }
  }
}
