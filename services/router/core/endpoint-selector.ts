// Chooses the endpoint for one attempt: the endpoints of one pool of the model (colocated, prefill or
// decode, by their role) on a hash ring (rebuilt only when the set of endpoints in the pool changes,
// never on health changes, so a flapping endpoint does not move other keys), walked from the request's
// key, less those that are not eligible (unhealthy, ejected) or already tried, and those without a
// working KV tier when the pool prefers it and some have one, then through the routing pipeline. Prefill and decode pools are rings of their own,
// so both sides of a disaggregated request are prefix-affine.
import type { Endpoint, EndpointRole } from "../endpoints/endpoint.ts";
import type { EndpointPool } from "../endpoints/endpoint-pool.ts";
import { HashRing } from "../routing/hash-ring.ts";
import type { Pick, RoutingPipeline } from "../routing/routing-pipeline.ts";
import type { PreparedRequest } from "./router-request.ts";
import type { FallbackReason } from "./serving-path.ts";

export interface Selection {
  endpoint: Endpoint;
  pick: Pick;
}

/** Where an attempt may go: the endpoints of one role; `kv`: those with a working KV tier first. */
export interface PoolChoice {
  role: EndpointRole;
  kv: boolean;
}

/**
 * How a request is served, decided when it starts: disaggregated when the model has eligible prefill
 * and decode endpoints with working KV tiers (and the request allows it), otherwise whole on one
 * endpoint of `pool` (colocated endpoints first; a disaggregated model without one of its sides
 * still serves on the other: a fallback, with its reason, when the model has prefill or decode
 * endpoints at all).
 */
export type Route =
  | { type: "disaggregated" }
  | { type: "colocated"; pool: PoolChoice; fallback?: FallbackReason };

export const PREFILL_POOL: PoolChoice = { role: "prefill", kv: true };
export const DECODE_POOL: PoolChoice = { role: "decode", kv: true };

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

  /** The eligible endpoints of a model, any role. */
  eligible(modelId: string): Endpoint[] {
    return this.#pool.serving(modelId).filter((e) => e.eligible);
  }

  /** `split`: the request may be served in two halves (see resumable in continuation.ts). */
  route(modelId: string, split: boolean): Route {
    const eligible = this.eligible(modelId);
    const has = (pool: PoolChoice) => eligible.some((e) => fits(e, pool));
    if (split && has(PREFILL_POOL) && has(DECODE_POOL)) return { type: "disaggregated" };
    const disaggregated = this.#pool.serving(modelId).some((e) => e.role !== "both");
    const fallback = disaggregated ? fallbackReason(eligible, split) : undefined;
    // Whole on one endpoint: any KV tier is then only a prefix cache.
    for (const role of ["both", "decode", "prefill"] as const)
      if (eligible.some((e) => e.role === role))
        return { type: "colocated", pool: { role, kv: false }, ...(fallback && { fallback }) };
    return { type: "colocated", pool: { role: "both", kv: false }, ...(fallback && { fallback }) };
  }

  select(prepared: PreparedRequest, tried: ReadonlySet<string>, pool: PoolChoice): Selection | undefined {
    const modelId = prepared.model.id;
    const order = this.ring(modelId, pool.role).walk(prepared.key.position);
    let endpoints: Endpoint[] = [];
    for (const name of order) {
      const endpoint = this.#pool.get(name);
      if (endpoint?.eligible && endpoint.role === pool.role && endpoint.serves(modelId) && !tried.has(name))
        endpoints.push(endpoint);
    }
    if (pool.kv && endpoints.some((e) => e.kvReady)) endpoints = endpoints.filter((e) => e.kvReady);
    const pick = this.#pipeline.pick(
      { key: prepared.key, promptTokens: prepared.promptIds.length },
      endpoints.map((e) => e.candidate),
    );
    if (pick === undefined) return undefined;
    const endpoint = endpoints.find((e) => e.name === pick.candidate.name);
    return endpoint && { endpoint, pick };
  }

  /** The ring of every endpoint of `role` that reported serving the model, eligible or not. */
  ring(modelId: string, role: EndpointRole = "both"): HashRing {
    const names = this.#pool
      .serving(modelId)
      .filter((e) => e.role === role)
      .map((e) => e.name);
    const members = names.sort().join("\u0000");
    const key = `${modelId}\u0000${role}`;
    const cached = this.#rings.get(key);
    if (cached?.members === members) return cached.ring;
    const ring = new HashRing(names, this.#virtualNodes);
    this.#rings.set(key, { members, ring });
    return ring;
  }
}

function fallbackReason(eligible: readonly Endpoint[], split: boolean): FallbackReason {
  if (!split) return "sampling";
  if (!eligible.some((e) => e.role === "prefill")) return "no_prefill_endpoint";
  if (!eligible.some((e) => e.role === "decode")) return "no_decode_endpoint";
  return "kv_unavailable";
}

function fits(endpoint: Endpoint, pool: PoolChoice): boolean {
  return endpoint.role === pool.role && (!pool.kv || endpoint.kvReady);
}
