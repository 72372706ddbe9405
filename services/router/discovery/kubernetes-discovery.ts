// Kubernetes discovery: the seam for the operator. When the operator lands it registers every worker
// shard in its InferenceModel's status (model, role, replica, stage, rank, endpoint); this class will
// list + watch that InferenceModel through the API server (relisting on 410 Gone, backing off from
// 1 s to 30 s) and hand the serving shards' endpoints to onChange, named by pod so the hash ring stays
// put when a pod's IP changes. Until then starting it fails with UNIMPLEMENTED and a clear message, so
// a config asking for it is refused at start-up rather than routing to nothing.
import { Code, TesseraError } from "../../common/errors.ts";
import type { EndpointDiscovery, EndpointSpec } from "./discovery.ts";

export interface KubernetesDiscoveryConfig {
  namespace: string;
  /** The InferenceModel whose registered shards are the endpoints. */
  inferenceModel: string;
}

export class KubernetesDiscovery implements EndpointDiscovery {
  readonly #config: KubernetesDiscoveryConfig;

  constructor(config: KubernetesDiscoveryConfig) {
    this.#config = config;
  }

  async start(_onChange: (endpoints: EndpointSpec[]) => void): Promise<void> {
    const { namespace, inferenceModel } = this.#config;
    throw new TesseraError(
      Code.UNIMPLEMENTED,
      `discovery.type kubernetes (InferenceModel ${namespace}/${inferenceModel}) needs the operator, which is not built yet; use discovery.type static`,
    );
  }

  async stop(): Promise<void> {}
}
