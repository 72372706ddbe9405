// What the reconcilers read: the informers' caches of models, pools, worker pods, services and
// router deployments,
// with the model -> pods and pool -> pods lookups they need. Reads never call the API.
import { LABELS } from "../../services/api/group.ts";
import type { InferenceModel, WorkerPool } from "../../services/api/kinds.ts";
import type { Informer } from "../../services/kube/informer.ts";
import type { KubeObject } from "../../services/kube/kube-object.ts";

export interface ClusterCache {
  model(namespace: string, name: string): InferenceModel | undefined;
  pool(namespace: string, name: string): WorkerPool | undefined;
  pools(namespace: string): WorkerPool[];
  models(namespace: string): InferenceModel[];
  /** Worker pods of a model (by the model label). */
  podsOfModel(namespace: string, model: string): KubeObject[];
  /** Worker pods in a pool (by the pool label), over all models. */
  podsInPool(namespace: string, pool: string): KubeObject[];
  service(namespace: string, name: string): KubeObject | undefined;
  deployment(namespace: string, name: string): KubeObject | undefined;
}

export interface CacheInformers {
  models: Informer<InferenceModel>;
  pools: Informer<WorkerPool>;
  pods: Informer<KubeObject>;
  services: Informer<KubeObject>;
  deployments: Informer<KubeObject>;
}

export function informerCache(informers: CacheInformers): ClusterCache {
  const inNamespace = <T extends KubeObject>(items: T[], namespace: string) =>
    items.filter((o) => o.metadata.namespace === namespace);
  const podsWith = (namespace: string, label: string, value: string) =>
    inNamespace(informers.pods.list(), namespace).filter((p) => p.metadata.labels?.[label] === value);
  return {
    model: (namespace, name) => informers.models.get(namespace, name),
    pool: (namespace, name) => informers.pools.get(namespace, name),
    pools: (namespace) => inNamespace(informers.pools.list(), namespace),
    models: (namespace) => inNamespace(informers.models.list(), namespace),
    podsOfModel: (namespace, model) => podsWith(namespace, LABELS.model, model),
    podsInPool: (namespace, pool) => podsWith(namespace, LABELS.pool, pool),
    service: (namespace, name) => informers.services.get(namespace, name),
    deployment: (namespace, name) => informers.deployments.get(namespace, name),
  };
}
