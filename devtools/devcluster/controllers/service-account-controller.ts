// Every active namespace gets a "default" ServiceAccount (pods name it implicitly), as the
// Kubernetes service account controller does.

import type { ReconcileLoop, ReconcileOutcome } from "../../../services/kube/reconcile-loop.ts";
import type { WatchHandle } from "../apiserver/cluster/api-types.ts";
import type { ClusterApi } from "../apiserver/cluster/cluster-api.ts";
import { statusCodeOf } from "../apiserver/core/api-status.ts";
import { NAMESPACES, SERVICEACCOUNTS } from "../objects/refs.ts";
import { type ControllerDeps, controllerLoop } from "./controller.ts";

export class ServiceAccountController {
  readonly loop: ReconcileLoop;
  readonly #api: ClusterApi;
  #watches: WatchHandle[] = [];

  constructor(deps: ControllerDeps) {
    this.#api = deps.api;
    this.loop = controllerLoop("serviceaccount-controller", (ns) => this.reconcile(ns), deps);
  }

  start(): void {
    this.#watches = [
      this.#api.watch(NAMESPACES, {}, (e) => this.loop.queue.add(e.object.metadata.name ?? "")),
      this.#api.watch(SERVICEACCOUNTS, { fieldSelector: "metadata.name=default" }, (e) => {
        if (e.type === "DELETED") this.loop.queue.add(e.object.metadata.namespace ?? "");
      }),
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
      this.#api.create(
        SERVICEACCOUNTS,
        namespace,
        { apiVersion: "v1", kind: "ServiceAccount", metadata: { name: "default" } },
        { fieldManager: "serviceaccount-controller" },
      );
    } catch (err) {
      const code = statusCodeOf(err);
      if (code !== 404 && code !== 409 && code !== 403) throw err;
    }
    return undefined;
  }
}
