// Stands in for a kubelet in operator specs: pods get an IP and turn Running and Ready (at once,
// or when the test says), or fail. It also stands in for the Deployment controller: with autoReady,
// a Deployment reports all its replicas available (the router the operator runs per model). Works
// on the dev cluster's in-process API.

import type { WatchHandle } from "../../devtools/devcluster/apiserver/cluster/api-types.ts";
import type { ClusterApi } from "../../devtools/devcluster/apiserver/cluster/cluster-api.ts";
import type { JsonValue } from "../../services/kube/kube-object.ts";

const PODS = { group: "", version: "v1", resource: "pods" };
const DEPLOYMENTS = { group: "apps", version: "v1", resource: "deployments" };

export class PodSimulator {
  readonly #api: ClusterApi;
  #autoReady: boolean;
  #watch: WatchHandle | undefined;
  #deployments: WatchHandle | undefined;
  #nextIp = 1;
  readonly #ips = new Map<string, string>();

  constructor(api: ClusterApi, options: { autoReady?: boolean } = {}) {
    this.#api = api;
    this.#autoReady = options.autoReady ?? true;
  }

  set autoReady(value: boolean) {
    this.#autoReady = value;
  }

  start(): void {
    this.#watch = this.#api.watch(PODS, { resourceVersion: this.#api.resourceVersion }, (event) => {
      if (event.type !== "ADDED" || !this.#autoReady) return;
      const { namespace = "", name = "" } = event.object.metadata;
      setImmediate(() => this.#tryReady(namespace, name));
    });
    const since = { resourceVersion: this.#api.resourceVersion };
    this.#deployments = this.#api.watch(DEPLOYMENTS, since, (event) => {
      if (event.type === "DELETED" || !this.#autoReady) return;
      const { namespace = "", name = "" } = event.object.metadata;
      const replicas = Number((event.object["spec"] as { replicas?: number } | undefined)?.replicas ?? 1);
      const status = event.object["status"] as { availableReplicas?: number } | undefined;
      if (status?.availableReplicas === replicas) return;
      setImmediate(() => this.#tryAvailable(namespace, name, replicas));
    });
  }

  stop(): void {
    this.#watch?.stop();
    this.#deployments?.stop();
  }

  /** Reports `available` of the Deployment's replicas available (and ready). */
  setDeploymentAvailable(namespace: string, name: string, available: number): void {
    const status = { readyReplicas: available, availableReplicas: available };
    this.#api.patch(
      DEPLOYMENTS,
      namespace,
      name,
      "merge",
      { status },
      {
        subresource: "status",
        fieldManager: "deployment-controller",
      },
    );
  }

  #tryAvailable(namespace: string, name: string, replicas: number): void {
    try {
      this.setDeploymentAvailable(namespace, name, replicas);
    } catch {
      // deleted meanwhile
    }
  }

  ipOf(namespace: string, name: string): string {
    const key = `${namespace}/${name}`;
    let ip = this.#ips.get(key);
    if (!ip) {
      const n = this.#nextIp++;
      ip = `127.0.${2 + Math.floor(n / 250)}.${(n % 250) + 1}`;
      this.#ips.set(key, ip);
    }
    return ip;
  }

  markReady(namespace: string, name: string): void {
    this.#status(namespace, name, {
      phase: "Running",
      podIP: this.ipOf(namespace, name),
      conditions: [{ type: "Ready", status: "True" }],
      containerStatuses: [{ name: "worker", ready: true, restartCount: 0 }],
    });
  }

  markFailed(namespace: string, name: string): void {
    this.#status(namespace, name, { phase: "Failed", conditions: [{ type: "Ready", status: "False" }] });
  }

  #tryReady(namespace: string, name: string): void {
    try {
      this.markReady(namespace, name);
    } catch {
      // deleted meanwhile
    }
  }

  #status(namespace: string, name: string, status: JsonValue): void {
    this.#api.patch(
      PODS,
      namespace,
      name,
      "merge",
      { status },
      { subresource: "status", fieldManager: "kubelet" },
    );
  }
}

/** Polls until check returns a value (not undefined/false), or fails after timeoutMs with what. */
export async function waitFor<T>(
  what: string,
  check: () => T | undefined | false | Promise<T | undefined | false>,
  timeoutMs = 10_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
