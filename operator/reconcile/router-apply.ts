// Applies the router objects of a model (operator/router/router-objects.ts) when they differ from
// what is there: the Deployment and Service are compared with the informer caches (their spec-hash
// annotation), so one deleted by hand comes back; the ServiceAccount, Role, RoleBinding and
// PodDisruptionBudget, which no informer watches, are applied once per operator process and
// whenever they change.
import type { InferenceModelSpec } from "../../services/api/inference-model-spec.ts";
import type { WorkerPoolSpec } from "../../services/api/worker-pool.ts";
import type { KubeObject } from "../../services/kube/kube-object.ts";
import {
  DEPLOYMENTS,
  POD_DISRUPTION_BUDGETS,
  type ResourceRef,
  ROLE_BINDINGS,
  ROLES,
  SERVICE_ACCOUNTS,
  SERVICES,
} from "../../services/kube/resources.ts";
import type { ModelRef } from "../placement/planner.ts";
import { routerAvailable, routerEndpoint, routerName, routerObjects } from "../router/router-objects.ts";
import type { ReconcilerDeps } from "./reconciler-deps.ts";
import { liveUpToDate, specHash } from "./workers-service.ts";

/** What the model's status says of its router. */
export interface RouterState {
  endpoint: string;
  available: boolean;
}

const RESOURCES: Record<string, ResourceRef> = {
  ServiceAccount: SERVICE_ACCOUNTS,
  Role: ROLES,
  RoleBinding: ROLE_BINDINGS,
  Service: SERVICES,
  PodDisruptionBudget: POD_DISRUPTION_BUDGETS,
  Deployment: DEPLOYMENTS,
};

export class RouterApplier {
  readonly #deps: ReconcilerDeps;
  /** Per model key and kind: the spec hash this process last applied (kinds no informer watches). */
  readonly #applied = new Map<string, Map<string, string>>();

  constructor(deps: ReconcilerDeps) {
    this.#deps = deps;
  }

  /** Applies what changed; the router needs the default pool (its image and command). */
  async apply(key: string, model: ModelRef, spec: InferenceModelSpec, pool: WorkerPoolSpec): Promise<void> {
    const applied = this.#applied.get(key) ?? new Map<string, string>();
    this.#applied.set(key, applied);
    for (const object of routerObjects(model, spec, pool)) {
      const kind = object.kind ?? "";
      if (this.#upToDate(model, object, applied.get(kind))) continue;
      const ref = RESOURCES[kind];
      if (!ref) continue;
      await this.#deps.client.apply(ref, model.namespace, object, { force: true });
      applied.set(kind, specHash(object) ?? "");
    }
  }

  /** The router's endpoint and whether its Deployment has an available pod. */
  state(model: ModelRef): RouterState {
    const deployment = this.#deps.cache.deployment(model.namespace, routerName(model.name));
    return { endpoint: routerEndpoint(model), available: routerAvailable(deployment) };
  }

  forget(key: string): void {
    this.#applied.delete(key);
  }

  #upToDate(model: ModelRef, desired: KubeObject, lastHash: string | undefined): boolean {
    const name = desired.metadata.name ?? "";
    const { cache } = this.#deps;
    switch (desired.kind) {
      case "Service":
        return liveUpToDate(cache.service(model.namespace, name), desired);
      case "Deployment":
        return liveUpToDate(cache.deployment(model.namespace, name), desired);
      default:
        return lastHash !== undefined && lastHash === specHash(desired);
    }
  }
}
