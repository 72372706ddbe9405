// Every active namespace gets the kube-root-ca.crt ConfigMap with the cluster CA (ca.crt), which
// pods' service-account token volumes project, as Kubernetes' root-ca-cert-publisher does; an
// edited or deleted one is put back.

import type { ReconcileLoop, ReconcileOutcome } from "../../../services/kube/reconcile-loop.ts";
import type { WatchHandle } from "../apiserver/cluster/api-types.ts";
import type { ClusterApi } from "../apiserver/cluster/cluster-api.ts";
import { ROOT_CA_CONFIGMAP } from "../apiserver/cluster/service-account-admission.ts";
import { statusCodeOf } from "../apiserver/core/api-status.ts";
import { CONFIGMAPS, NAMESPACES } from "../objects/refs.ts";
import { type ControllerDeps, controllerLoop } from "./controller.ts";

const MANAGER = "root-ca-cert-publisher";

export class RootCaPublisher {
  readonly loop: ReconcileLoop;
  readonly #api: ClusterApi;
  readonly #caCert: string;
  #watches: WatchHandle[] = [];

  constructor(deps: ControllerDeps, caCert: string) {
    this.#api = deps.api;
    this.#caCert = caCert;
    this.loop = controllerLoop(MANAGER, (ns) => this.reconcile(ns), deps);
  }

  start(): void {
    this.#watches = [
      this.#api.watch(NAMESPACES, {}, (e) => this.loop.queue.add(e.object.metadata.name ?? "")),
      this.#api.watch(CONFIGMAPS, { fieldSelector: `metadata.name=${ROOT_CA_CONFIGMAP}` }, (e) =>
        this.loop.queue.add(e.object.metadata.namespace ?? ""),
      ),
    ];
  }

  stop(): void {
    for (const watch of this.#watches) watch.stop();
    void this.loop.stop();
  }

  reconcile(namespace: string): ReconcileOutcome | undefined {
    try {
      const ns = this.#api.get(NAMESPACES, "", namespace);
      if (ns.metadata.deletionTimestamp) return undefined;
      const current = this.#api.store.get("configmaps", namespace, ROOT_CA_CONFIGMAP);
      const data = { "ca.crt": this.#caCert };
      if (!current)
        this.#api.create(
          CONFIGMAPS,
          namespace,
          { apiVersion: "v1", kind: "ConfigMap", metadata: { name: ROOT_CA_CONFIGMAP }, data },
          { fieldManager: MANAGER },
        );
      else if ((current["data"] as Record<string, string> | undefined)?.["ca.crt"] !== this.#caCert)
        this.#api.update(
          CONFIGMAPS,
          namespace,
          ROOT_CA_CONFIGMAP,
          { ...current, data },
          { fieldManager: MANAGER },
        );
    } catch (err) {
      const code = statusCodeOf(err);
      if (code !== 404 && code !== 409 && code !== 403) throw err;
    }
    return undefined;
  }
}
