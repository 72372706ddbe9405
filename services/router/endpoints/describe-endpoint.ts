// One worker endpoint as GET /v1/endpoints lists it: what the router knows and routes by, so a user can
// see a disaggregated fleet (which endpoints are prefill and decode, whether their KV tier works, which
// are ejected) without reading the router's logs.
import type { Endpoint, EndpointRole } from "./endpoint.ts";
import type { HealthStatus } from "./health-watch.ts";

export interface EndpointDescription {
  name: string;
  address: string;
  role: EndpointRole;
  /** grpc.health.v1 of tessera.v1.Inference: SERVING, NOT_SERVING, UNREACHABLE, UNKNOWN. */
  health: HealthStatus;
  /** Its KV transfer path (Redis): SERVING, NOT_SERVING, SERVICE_UNKNOWN (none), ... */
  kv_health: HealthStatus;
  /** Takes new requests: serving and not ejected. */
  eligible: boolean;
  ejected: boolean;
  /** The models its ListModels reported (empty until it answered). */
  models: string[];
  in_flight: number;
}

export function describeEndpoint(endpoint: Endpoint): EndpointDescription {
  return {
    name: endpoint.name,
    address: endpoint.address,
    role: endpoint.role,
    health: endpoint.health,
    kv_health: endpoint.kvHealth,
    eligible: endpoint.eligible,
    ejected: endpoint.outliers.ejected,
    models: (endpoint.models ?? []).map((m) => m.id),
    in_flight: endpoint.inFlight,
  };
}
