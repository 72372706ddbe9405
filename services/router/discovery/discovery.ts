// Endpoint discovery: where the router learns which worker endpoints exist. One interface, two
// sources: a static file (standalone mode, static-file-discovery.ts) and Kubernetes (the shards the
// operator registers in InferenceModel status, kubernetes-discovery.ts: the seam for the operator).
import type { EndpointSpec } from "../endpoints/endpoint.ts";

export type { EndpointSpec };

export interface EndpointDiscovery {
  /**
   * Starts discovering: resolves once the first endpoint list was handed to `onChange` (or rejects
   * with a TesseraError naming what is wrong), then calls `onChange` with the whole new list each time
   * it changes, until stop().
   */
  start(onChange: (endpoints: EndpointSpec[]) => void): Promise<void>;
  stop(): Promise<void>;
}
