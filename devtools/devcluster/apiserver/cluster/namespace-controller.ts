// Namespace and CRD deletion: a terminating namespace has its content deleted, then goes; a
// deleted CustomResourceDefinition has its custom objects deleted, then goes (and stops being
// served). Both wait for objects with finalizers, as on real Kubernetes.
import type { Logger } from "../../../../services/kernel/log.ts";
import { statusCodeOf } from "../core/api-status.ts";
import { groupResourceOf } from "../resources/resource-type.ts";
import type { StoreEvent } from "../store/object-store.ts";
import type { ClusterApi } from "./cluster-api.ts";
import { NAMESPACE_FINALIZER } from "./cluster-api-delete.ts";
import { refOf } from "./garbage-collector.ts";
import { type Scheduler, WorkQueue } from "./work-queue.ts";

const NAMESPACES = { group: "", version: "v1", resource: "namespaces" };
const CRDS = { group: "apiextensions.k8s.io", version: "v1", resource: "customresourcedefinitions" };
const CRD_GROUP_RESOURCE = "customresourcedefinitions.apiextensions.k8s.io";

type Work = { kind: "namespace"; name: string } | { kind: "crd"; name: string };

export class NamespaceController {
  readonly #api: ClusterApi;
  readonly #queue: WorkQueue<Work>;
  readonly #terminating = new Set<string>();
  readonly #deletingCrds = new Map<string, string>();
  #stop: (() => void) | undefined;

  constructor(api: ClusterApi, options: { schedule?: Scheduler; log?: Logger } = {}) {
    this.#api = api;
    this.#queue = new WorkQueue((work) => this.#process(work), {
      ...(options.schedule ? { schedule: options.schedule } : {}),
      onError: (err, work) => options.log?.warn({ err, work }, "namespace cleanup failed"),
    });
  }

  start(): void {
    this.#stop = this.#api.store.watch(this.#api.store.revision, (event) => this.#observe(event));
    for (const ns of this.#api.store.list("namespaces"))
      this.#observe({ type: "ADDED", groupResource: "namespaces", revision: 0, object: ns });
    for (const crd of this.#api.store.list(CRD_GROUP_RESOURCE))
      this.#observe({ type: "ADDED", groupResource: CRD_GROUP_RESOURCE, revision: 0, object: crd });
  }

  stop(): void {
    this.#stop?.();
  }

  idle(): Promise<void> {
    return this.#queue.idle();
  }

  get busy(): boolean {
    return this.#queue.busy;
  }

  #observe(event: StoreEvent): void {
    const meta = event.object.metadata;
    if (event.groupResource === "namespaces" && meta.deletionTimestamp && event.type !== "DELETED") {
      this.#terminating.add(meta.name ?? "");
      this.#queue.add(`ns/${meta.name}`, { kind: "namespace", name: meta.name ?? "" });
    } else if (
      event.groupResource === CRD_GROUP_RESOURCE &&
      meta.deletionTimestamp &&
      event.type !== "DELETED"
    ) {
      const spec = event.object["spec"] as { group?: string; names?: { plural?: string } } | undefined;
      this.#deletingCrds.set(`${spec?.names?.plural}.${spec?.group}`, meta.name ?? "");
      this.#queue.add(`crd/${meta.name}`, { kind: "crd", name: meta.name ?? "" });
    } else if (event.type === "DELETED" && meta.namespace && this.#terminating.has(meta.namespace)) {
      this.#queue.add(`ns/${meta.namespace}`, { kind: "namespace", name: meta.namespace });
    } else if (event.type === "DELETED" && this.#deletingCrds.has(event.groupResource)) {
      const crd = this.#deletingCrds.get(event.groupResource) ?? "";
      this.#queue.add(`crd/${crd}`, { kind: "crd", name: crd });
    }
  }

  #process(work: Work): void {
    if (work.kind === "namespace") this.#cleanNamespace(work.name);
    else this.#cleanCrd(work.name);
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
