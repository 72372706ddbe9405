// Service -> EndpointSlices: for every Service with a selector, keeps the slices labelled
// kubernetes.io/service-name=<service> (managed-by this controller, owned by the Service so the
// garbage collector removes them with it) equal to desiredSlices(service, selected pods). In-cluster
// clients find a Service's pod IPs here: the dev cluster has no cluster IPs to route to.

import { type KubeObject, objectKey, splitKey } from "../../../services/kube/kube-object.ts";
import type { ReconcileLoop, ReconcileOutcome } from "../../../services/kube/reconcile-loop.ts";
import type { WatchHandle } from "../apiserver/cluster/api-types.ts";
import type { ClusterApi } from "../apiserver/cluster/cluster-api.ts";
import { statusCodeOf } from "../apiserver/core/api-status.ts";
import { jsonEqual } from "../apiserver/core/json-object.ts";
import type { Pod } from "../objects/pod-types.ts";
import { ENDPOINTSLICES, PODS, SERVICES } from "../objects/refs.ts";
import type { EndpointSlice, Service } from "../objects/workload-types.ts";
import { type ControllerDeps, controllerLoop } from "./controller.ts";
import { desiredSlices, type SliceContent } from "./endpoint-slices.ts";
import { controllerRef } from "./owner-refs.ts";

export const ENDPOINTSLICE_MANAGER = "endpointslice-controller.k8s.io";
export const SERVICE_NAME_LABEL = "kubernetes.io/service-name";
export const MANAGED_BY_LABEL = "endpointslice.kubernetes.io/managed-by";

function selects(selector: Record<string, string>, pod: Pod): boolean {
  const labels = pod.metadata.labels ?? {};
  return Object.entries(selector).every(([k, v]) => labels[k] === v);
}

export class EndpointSliceController {
  readonly loop: ReconcileLoop;
  readonly #api: ClusterApi;
  #watches: WatchHandle[] = [];

  constructor(deps: ControllerDeps) {
    this.#api = deps.api;
    this.loop = controllerLoop("endpointslice-controller", (key) => this.reconcile(key), deps);
  }

  start(): void {
    this.#watches = [
      this.#api.watch(SERVICES, {}, (e) => this.loop.queue.add(objectKey(e.object))),
      this.#api.watch(PODS, {}, (e) => {
        for (const svc of this.#api.list(SERVICES, { namespace: e.object.metadata.namespace ?? "" }).items)
          this.loop.queue.add(objectKey(svc));
      }),
    ];
  }

  stop(): void {
    for (const watch of this.#watches) watch.stop();
    void this.loop.stop();
  }

  reconcile(key: string): ReconcileOutcome | undefined {
    const { namespace, name } = splitKey(key);
    let service: Service | undefined;
    try {
      service = this.#api.get(SERVICES, namespace, name) as Service;
    } catch (err) {
      if (statusCodeOf(err) !== 404) throw err;
    }
    const existing = (
      this.#api.list(ENDPOINTSLICES, {
        namespace,
        labelSelector: `${SERVICE_NAME_LABEL}=${name},${MANAGED_BY_LABEL}=${ENDPOINTSLICE_MANAGER}`,
      }).items as EndpointSlice[]
    ).sort((a, b) => (a.metadata.name ?? "").localeCompare(b.metadata.name ?? ""));
    const selector = service?.spec.selector;
    const wanted: SliceContent[] =
      service && !service.metadata.deletionTimestamp && selector && Object.keys(selector).length > 0
        ? desiredSlices(
            service,
            (this.#api.list(PODS, { namespace }).items as Pod[]).filter((p) => selects(selector, p)),
          )
        : [];
    wanted.forEach((content, i) => {
      const current = existing[i];
      if (!current) this.#create(service as Service, content);
      else if (!jsonEqual(current.endpoints, content.endpoints) || !jsonEqual(current.ports, content.ports))
        this.#api.update(
          ENDPOINTSLICES,
          namespace,
          current.metadata.name ?? "",
          { ...current, ...content },
          {
            fieldManager: ENDPOINTSLICE_MANAGER,
          },
        );
    });
    for (const stale of existing.slice(wanted.length)) {
      try {
        this.#api.delete(ENDPOINTSLICES, namespace, stale.metadata.name ?? "");
      } catch (err) {
        if (statusCodeOf(err) !== 404) throw err;
      }
    }
    return undefined;
  }

  #create(service: Service, content: SliceContent): void {
    const slice: KubeObject = {
      apiVersion: "discovery.k8s.io/v1",
      kind: "EndpointSlice",
      metadata: {
        generateName: `${service.metadata.name}-`,
        labels: {
          [SERVICE_NAME_LABEL]: service.metadata.name ?? "",
          [MANAGED_BY_LABEL]: ENDPOINTSLICE_MANAGER,
        },
        ownerReferences: [controllerRef(service)],
      },
      addressType: "IPv4",
      ...content,
    };
    this.#api.create(ENDPOINTSLICES, service.metadata.namespace ?? "", slice, {
      fieldManager: ENDPOINTSLICE_MANAGER,
    });
  }
}
