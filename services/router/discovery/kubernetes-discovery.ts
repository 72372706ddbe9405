// Kubernetes discovery: the endpoints are the shards the operator registers in one InferenceModel's
// status (shard-endpoints.ts). It lists and watches InferenceModels in the namespace through the API
// server with the operator's own client and informer (services/kube, services/kube/informer.ts:
// a watch resumes from its last version, 410 Gone relists at once, other errors back off from 1 s to
// 30 s), so a status change reaches the router's rings as soon as the watch event arrives. The
// connection is the config's kubeconfig, else $KUBECONFIG, else the pod's service account, else
// ~/.kube/config, authenticated as kubectl does (services/kube/kubeconfig.ts). The router needs get,
// list and watch on inferencemodels in the namespace; start() fails with the API's answer when it
// cannot list them.

import { INFERENCE_MODELS } from "../../api/group.ts";
import type { InferenceModel } from "../../api/kinds.ts";
import { type Clock, systemClock } from "../../kernel/clock.ts";
import { Code, TesseraError } from "../../kernel/errors.ts";
import type { Logger } from "../../kernel/log.ts";
import { HttpsKubeClient } from "../../kube/https-client.ts";
import { Informer } from "../../kube/informer.ts";
import type { EndpointDiscovery, EndpointSpec } from "./discovery.ts";
import { shardEndpoints } from "./shard-endpoints.ts";

export interface KubernetesDiscoveryConfig {
  namespace: string;
  /** The InferenceModel whose registered shards are the endpoints. */
  inferenceModel: string;
  /** Kubeconfig file (default: $KUBECONFIG, in cluster, ~/.kube/config) and its context. */
  kubeconfig?: string | undefined;
  context?: string | undefined;
}

export interface KubernetesDiscoveryOptions {
  log: Logger;
  /** The process environment, read at start-up: KUBECONFIG, KUBERNETES_SERVICE_HOST/PORT, HOME. */
  env: Record<string, string | undefined>;
  clock?: Clock;
}

export const ROUTER_FIELD_MANAGER = "tessera-router";

export class KubernetesDiscovery implements EndpointDiscovery {
  readonly #config: KubernetesDiscoveryConfig;
  readonly #options: KubernetesDiscoveryOptions;
  #client: HttpsKubeClient | undefined;
  #informer: Informer<InferenceModel> | undefined;
  #last: string | undefined;

  constructor(config: KubernetesDiscoveryConfig, options: KubernetesDiscoveryOptions) {
    this.#config = config;
    this.#options = options;
  }

  async start(onChange: (endpoints: EndpointSpec[]) => void): Promise<void> {
    const { namespace, inferenceModel, kubeconfig, context } = this.#config;
    const { log } = this.#options;
    // @kubernetes/client-node (kubeconfig parsing and authentication) is ~900 modules, ~30 MB of a
    // router's heap that every full garbage collection walks: loaded only by a router that uses it.
    const { loadClusterConnection } = await import("../../kube/kubeconfig.ts");
    const connection = loadClusterConnection({
      kubeconfig,
      context,
      env: this.#options.env,
      field: "discovery.kubeconfig",
    });
    const client = new HttpsKubeClient(connection, { fieldManager: ROUTER_FIELD_MANAGER });
    this.#client = client;
    try {
      await client.list(INFERENCE_MODELS, { namespace });
    } catch (err) {
      throw new TesseraError(
        Code.UNAVAILABLE,
        `discovery: cannot list InferenceModels in namespace ${namespace}: ${(err as Error).message}`,
        { cause: err },
      );
    }
    const informer = new Informer<InferenceModel>(client, INFERENCE_MODELS, {
      namespace,
      clock: this.#options.clock ?? systemClock,
      log,
    });
    this.#informer = informer;
    const publish = () => {
      const specs = shardEndpoints(informer.get(namespace, inferenceModel));
      const key = JSON.stringify(specs);
      if (key === this.#last) return;
      this.#last = key;
      log.info(
        { inferenceModel: `${namespace}/${inferenceModel}`, endpoints: specs.length },
        "shards discovered",
      );
      onChange(specs);
    };
    informer.onChange((_type, object) => {
      if (informer.hasSynced && object.metadata.name === inferenceModel) publish();
    });
    informer.start();
    await informer.synced();
    publish();
  }

  async stop(): Promise<void> {
    await this.#informer?.stop();
    this.#client?.close();
  }
}
