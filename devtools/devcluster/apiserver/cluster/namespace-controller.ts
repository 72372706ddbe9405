// Namespace and CRD deletion: a terminating namespace has its content deleted, then goes; a
// deleted CustomResourceDefinition has its custom objects deleted, then goes (and stops being
// served). Both wait for objects with finalizers, as on real Kubernetes. Work is queued as keys
// ns/<name> and crd/<name> on a reconcile loop (services/kube/reconcile-loop.ts); a failure is
// logged and not retried: the next deletion in the namespace or of a custom object queues it again.
import { createLogger, type Logger } from "../../../../services/kernel/log.ts";
import { ReconcileLoop } from "../../../../services/kube/reconcile-loop.ts";
import { statusCodeOf } from "../core/api-status.ts";
import { groupResourceOf } from "../resources/resource-type.ts";
import type { StoreEvent } from "../store/object-store.ts";
import type { ClusterApi } from "./cluster-api.ts";
import { NAMESPACE_FINALIZER } from "./cluster-api-delete.ts";
import { refOf } from "./garbage-collector.ts";

const NAMESPACES = { group: "", version: "v1", resource: "namespaces" };
const CRDS = { group: "apiextensions.k8s.io", version: "v1", resource: "customresourcedefinitions" };
const CRD_GROUP_RESOURCE = "customresourcedefinitions.apiextensions.k8s.io";

export class NamespaceController {
  readonly #api: ClusterApi;
  readonly #log: Logger;
  readonly #loop: ReconcileLoop;
  readonly #terminating = new Set<string>();
  readonly #deletingCrds = new Map<string, string>();
  #stop: (() => void) | undefined;

  constructor(api: ClusterApi, options: { log?: Logger } = {}) {
    this.#api = api;
    this.#log = options.log ?? createLogger("namespace-controller", "silent");
    this.#loop = new ReconcileLoop("namespace-controller", (key) => this.#process(key), {
      clock: api.clock,
      log: this.#log,
    });
  }

  start(): void {
    this.#loop.start();
    this.#stop = this.#api.store.watch(this.#api.store.revision, (event) => this.#observe(event));
    for (const ns of this.#api.store.list("namespaces"))
      this.#observe({ type: "ADDED", groupResource: "namespaces", revision: 0, object: ns });
    for (const crd of this.#api.store.list(CRD_GROUP_RESOURCE))
      this.#observe({ type: "ADDED", groupResource: CRD_GROUP_RESOURCE, revision: 0, object: crd });
  }

  stop(): void {
    this.#stop?.();
    void this.#loop.stop();
  }

  idle(): Promise<void> {
    return this.#loop.idle();
  }

  get busy(): boolean {
    return this.#loop.busy;
  }

  #observe(event: StoreEvent): void {
    const meta = event.object.metadata;
    if (event.groupResource === "namespaces" && meta.deletionTimestamp && event.type !== "DELETED") {
      this.#terminating.add(meta.name ?? "");
      this.#loop.queue.add(`ns/${meta.name ?? ""}`);
    } else if (
      event.groupResource === CRD_GROUP_RESOURCE &&
      meta.deletionTimestamp &&
      event.type !== "DELETED"
    ) {
      const spec = event.object["spec"] as { group?: string; names?: { plural?: string } } | undefined;
      this.#deletingCrds.set(`${spec?.names?.plural}.${spec?.group}`, meta.name ?? "");
      this.#loop.queue.add(`crd/${meta.name ?? ""}`);
    } else if (event.type === "DELETED" && meta.namespace && this.#terminating.has(meta.namespace)) {
      this.#loop.queue.add(`ns/${meta.namespace}`);
    } else if (event.type === "DELETED" && this.#deletingCrds.has(event.groupResource)) {
      const crd = this.#deletingCrds.get(event.groupResource) ?? "";
      this.#loop.queue.add(`crd/${crd}`);
    }
  }

  #process(key: string): undefined {
    const slash = key.indexOf("/");
    const name = key.slice(slash + 1);
    try {
      if (key.startsWith("ns/")) this.#cleanNamespace(name);
      else this.#cleanCrd(name);
    } catch (err) {
      this.#log.warn({ err, work: key }, "namespace cleanup failed");
    }
    return undefined;
  }

  #cleanNamespace(name: string): void {
    let remaining = 0;
    for (const groupResource of this.#api.store.groupResources()) {
      const type = this.#api.storageType(groupResource);
      if (!type?.namespaced) continue;
      for (const object of this.#api.store.list(groupResource, name)) {
        remaining++;
        if (!object.metadata.deletionTimestamp)
          this.#quietly(() =>
            this.#api.delete(refOf(type), name, object.metadata.name ?? "", {
              propagationPolicy: "Background",
            }),
          );
      }
    }
    if (remaining > 0) return;
    const ns = this.#api.store.get("namespaces", "", name);
    if (!ns) {
      this.#terminating.delete(name);
      return;
    }
    const spec = (ns["spec"] ?? {}) as { finalizers?: string[] };
    if ((spec.finalizers ?? []).includes(NAMESPACE_FINALIZER)) {
      ns["spec"] = { ...spec, finalizers: (spec.finalizers ?? []).filter((f) => f !== NAMESPACE_FINALIZER) };
      this.#api.store.update("namespaces", ns);
    }
    if (this.#api.finalizeDeletion(NAMESPACES, "", name)) this.#terminating.delete(name);
  }

  #cleanCrd(name: string): void {
    const crd = this.#api.store.get(CRD_GROUP_RESOURCE, "", name);
    if (!crd) return;
    const type = this.#api.registry.all().find((t) => t.crdName === name && t.version === t.storageVersion);
    const objects = type ? this.#api.store.list(groupResourceOf(type)) : [];
    for (const object of objects) {
      if (!object.metadata.deletionTimestamp && type) {
        this.#quietly(() =>
          this.#api.delete(refOf(type), object.metadata.namespace ?? "", object.metadata.name ?? ""),
        );
      }
    }
    if (type && this.#api.store.list(groupResourceOf(type)).length > 0) return;
    if (this.#api.finalizeDeletion(CRDS, "", name)) {
      for (const [gr, crdName] of this.#deletingCrds) if (crdName === name) this.#deletingCrds.delete(gr);
    }
  }

  #quietly(action: () => unknown): void {
    try {
      action();
    } catch (err) {
      if (statusCodeOf(err) !== 404) throw err;
    }
  }
}
