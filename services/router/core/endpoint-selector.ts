// Chooses the endpoint for one attempt: the model's endpoints on a hash ring (rebuilt only when the
// set of endpoints serving the model changes, never on health changes, so a flapping endpoint does
// not move other keys), walked from the request's key, less those that are not eligible (unhealthy,
// ejected) or already tried, then through the routing pipeline.
import type { Endpoint } from "../endpoints/endpoint.ts";
import type { EndpointPool } from "../endpoints/endpoint-pool.ts";
import { HashRing } from "../routing/hash-ring.ts";
import type { Pick, RoutingPipeline } from "../routing/routing-pipeline.ts";
import type { PreparedRequest } from "./router-request.ts";

export interface Selection {
  endpoint: Endpoint;
  pick: Pick;
}

export class EndpointSelector {
  readonly #pool: EndpointPool;
  readonly #pipeline: RoutingPipeline;
  readonly #virtualNodes: number;
  readonly #rings = new Map<string, { members: string; ring: HashRing }>();

  constructor(pool: EndpointPool, pipeline: RoutingPipeline, virtualNodes: number) {
    this.#pool = pool;
    this.#pipeline = pipeline;
    this.#virtualNodes = virtualNodes;
  }

  /** The eligible endpoints of a model. */
  eligible(modelId: string): Endpoint[] {
    return this.#pool.serving(modelId).filter((e) => e.eligible);
  }

  select(prepared: PreparedRequest, tried: ReadonlySet<string>): Selection | undefined {
    const modelId = prepared.model.id;
    const order = this.ring(modelId).walk(prepared.key.position);
    const endpoints: Endpoint[] = [];
    for (const name of order) {
      const endpoint = this.#pool.get(name);
      if (endpoint?.eligible && endpoint.serves(modelId) && !tried.has(name)) endpoints.push(endpoint);
    }
    const pick = this.#pipeline.pick(
      { key: prepared.key, promptTokens: prepared.promptIds.length },
      endpoints.map((e) => e.candidate),
    );
    if (pick === undefined) return undefined;
    const endpoint = endpoints.find((e) => e.name === pick.candidate.name);
    return endpoint && { endpoint, pick };
  }

  /** The ring of every endpoint that reported serving the model, eligible or not. */
  ring(modelId: string): HashRing {
    const names = this.#pool.serving(modelId).map((e) => e.name);
    const members = names.sort().join("\u0000");
    const cached = this.#rings.get(modelId);
    if (cached?.members === members) return cached.ring;
    const ring = new HashRing(names, this.#virtualNodes);
    this.#rings.set(modelId, { members, ring });
    return ring;
  }
}
