// The router core, behind both front doors: authenticate, validate and tokenize, charge the caller's
// rate limits, answer from the response cache or join an identical request in flight, wait for
// admission, then stream from the endpoint the routing pipeline picks (with failover). generate()
// resolves once the first event is there, so every failure before it (bad request, overload, no
// endpoint) is a status the front door can still send; later failures end the event stream.
import { FinishReason } from "../../../proto/gen/tessera/v1/inference_pb.js";
import { grammarProblem } from "../../inference/grammar/grammar-source.ts";
import type { Clock } from "../../kernel/clock.ts";
import { Code, TesseraError } from "../../kernel/errors.ts";
import type { Logger } from "../../kernel/log.ts";
import { SlotMap } from "../../kernel/slot-map.ts";
import { AdmissionQueue } from "../admission/admission-queue.ts";
import { type ApiKeys, type Caller, chargeCaller, refundCaller } from "../admission/api-keys.ts";
import { cacheKey, isDeterministic, responseBytes } from "../cache/cache-key.ts";
import { ResponseCache } from "../cache/response-cache.ts";
import type { CachedResponse, SharedResponseCache } from "../cache/shared-response-cache.ts";
import type { RouterConfig } from "../config/router-config.ts";
import type { RouterMetrics } from "../metrics/router-metrics.ts";
import type { ModelRegistry } from "../models/model-registry.ts";
import type { EndpointSelector } from "./endpoint-selector.ts";
import { Flight } from "./flight.ts";
import { prepareRequest } from "./prepare-request.ts";
import type { RouterEvent } from "./router-events.ts";
import type { PreparedRequest, RouterRequest } from "./router-request.ts";
import type { ServingPath } from "./serving-path.ts";
import { upstream } from "./upstream.ts";

export interface Generation {
  model: string;
  /** The endpoint that produced the events (for a cache hit: the one that produced them first). */
  endpoint: string;
  cache: "hit" | "coalesced" | "miss" | "off";
  promptTokens: number;
  /** How it was served and by which endpoints; complete once read() resolved. */
  served: ServingPath;
  /**
   * Hands each event to `onEvent` as it comes (synchronously, from the upstream stream's callbacks);
   * resolves at the end, rejects with the failure (or the request's cancellation). Call it once.
   */
  read(onEvent: (event: RouterEvent) => void): Promise<void>;
}

export interface RouterDeps {
  models: ModelRegistry;
  selector: EndpointSelector;
  config: Pick<RouterConfig, "routing" | "failover" | "cache" | "admission">;
  apiKeys: ApiKeys | undefined;
  metrics: RouterMetrics | undefined;
  clock: Clock;
  log: Logger;
  /** The response cache's Redis backing, shared with other routers (cache.redis; only with cache.enabled). */
  sharedCache?: SharedResponseCache | undefined;
}

export class Router {
  readonly models: ModelRegistry;
  /** The header that carries a request's session key (routing.sessionHeader). */
  readonly sessionHeader: string;
  readonly #deps: RouterDeps;
  readonly #queues = new Map<string, AdmissionQueue>();
  /** Slots, not a Map of flights: a Map this long-lived keeps every flight it held (slot-map.ts). */
  readonly #flights = new SlotMap<Flight>();
  readonly #cache: ResponseCache<CachedResponse> | undefined;

  constructor(deps: RouterDeps) {
    this.#deps = deps;
    this.sessionHeader = deps.config.routing.sessionHeader;
    this.models = deps.models;
    const { cache } = deps.config;
    this.#cache = cache.enabled ? new ResponseCache(cache, deps.clock) : undefined;
    for (const model of deps.models.models) {
      const capacity = () =>
        deps.config.admission.maxInFlightPerEndpoint * Math.max(1, deps.selector.eligible(model.id).length);
      this.#queues.set(model.id, new AdmissionQueue({ ...deps.config.admission, capacity }));
    }
  }

  get queueDepths(): { model: string; queued: number }[] {
    return [...this.#queues].map(([model, queue]) => ({ model, queued: queue.queued }));
  }

  /** Call when endpoints change: admission capacity follows the eligible endpoints. */
  endpointsChanged(): void {
    for (const queue of this.#queues.values()) queue.wake();
  }

  async generate(request: RouterRequest, callerSignal: AbortSignal): Promise<Generation> {
    const { config, clock } = this.#deps;
    const caller = this.#authenticate(request.apiKey);
    const prepared = prepareRequest(request, this.models, config.routing);
    if (prepared.error)
      throw this.#rejected(
        prepared.error,
        prepared.error.code === Code.UNAVAILABLE ? "unavailable" : "invalid",
      );
    const { sampling, promptIds } = prepared.value;
    if (sampling.structured) {
      // A schema, regex or grammar that does not compile is the client's 400, before any worker is asked.
      const problem = await grammarProblem(sampling.structured);
      if (problem !== undefined) {
        const field = request.structuredField ?? "structured";
        throw this.#rejected(TesseraError.invalidArgument(field, problem), "invalid");
      }
    }
    // Each sequence (n, best_of) may generate max_tokens; the prompt is computed once.
    const cost = promptIds.length + sampling.maxTokens * Math.max(sampling.n ?? 1, sampling.bestOf ?? 1);
    if (caller) {
      const charged = chargeCaller(caller, cost);
      if (charged.error) throw this.#rejected(charged.error, "rate_limited");
    }
    const timeout = config.admission.defaultTimeoutMs;
    const deadline = request.deadline ?? (timeout === undefined ? undefined : clock.now() + timeout);
    try {
      return await this.#serve(prepared.value, withDeadline(callerSignal, deadline, clock), deadline, caller);
    } catch (err) {
      // Refused or failed before its first token: nothing was served, so nothing is charged.
      if (caller) refundCaller(caller, cost);
      throw err;
    }
  }

  /** From the cache, by joining an identical request in flight, or through admission and upstream. */
  async #serve(
    prepared: PreparedRequest,
    signal: AbortSignal,
    deadline: number | undefined,
    caller: Caller | undefined,
  ): Promise<Generation> {
    const { metrics, config } = this.#deps;
    const { sampling, model, promptIds } = prepared;
    const key = this.#cacheKey(prepared);
    const base = { model: model.id, promptTokens: promptIds.length };
    let cached = key === undefined ? undefined : this.#cache?.get(key);
    const { sharedCache } = this.#deps;
    if (cached === undefined && key !== undefined && sharedCache && !this.#flights.has(key)) {
      // Another router may have answered it: a hit there is kept here too.
      cached = await sharedCache.get(key);
      if (cached) this.#cache?.set(key, cached, responseBytes(cached.events));
    }
    if (key !== undefined)
      metrics?.cacheLookup(cached ? "hit" : this.#flights.has(key) ? "coalesced" : "miss");
    if (cached) {
      const read = async (onEvent: (event: RouterEvent) => void) => {
        for (const event of cached.events) onEvent(refund(event, caller, sampling.maxTokens));
      };
      metrics?.servingPath(model.id, { path: "cached" });
      const served: ServingPath = {
        path: "cached",
        endpoints: [{ name: cached.endpoint, part: "whole" }],
        workerMs: 0,
      };
      return { ...base, endpoint: cached.endpoint, cache: "hit", served, read };
    }
    // A coalesced request shares the first one's upstream call, its deadline included.
    const running = key === undefined ? undefined : this.#flights.get(key);
    if (running) {
      const joined = await this.#read(running, signal, caller, sampling.maxTokens);
      return { ...base, ...joined, cache: "coalesced" };
    }
    const release = await this.#admit(model.id, signal, prepared.request.priority ?? 0);
    const flight = new Flight(
      upstream(prepared, {
        selector: this.#deps.selector,
        maxAttempts: config.failover.maxAttempts,
        maxMigrations: config.failover.maxMigrations,
        deadline,
        metrics,
        log: this.#deps.log,
      }),
      // Joiners and the cache need every event; without a key the one reader takes them as they come.
      { keep: key !== undefined },
    );
    if (key !== undefined && config.cache.coalesce) this.#flights.set(key, flight);
    void flight.settled.then(() => {
      release();
      if (key !== undefined) this.#remember(key, flight);
    });
    const read = await this.#read(flight, signal, caller, sampling.maxTokens);
    return { ...base, ...read, cache: key === undefined ? "off" : "miss" };
  }

  /** Once a flight is over: it no longer takes joiners; a complete answer goes into the cache. */
  #remember(key: string, flight: Flight): void {
    if (this.#flights.get(key) === flight) this.#flights.delete(key);
    const last = flight.events.at(-1);
    if (flight.error || last?.type !== "finish" || last.reason === FinishReason.CANCELLED) return;
    const response = { endpoint: flight.endpoint, events: flight.events };
    this.#cache?.set(key, response, responseBytes(flight.events));
    this.#deps.sharedCache?.set(key, response, this.#deps.config.cache.ttlMs);
  }

  async #read(flight: Flight, signal: AbortSignal, caller: Caller | undefined, maxTokens: number) {
    flight.join();
    try {
      await flight.first(signal);
    } catch (err) {
      flight.leave();
      throw err;
    }
    return {
      endpoint: flight.endpoint,
      served: flight.served,
      read: (onEvent: (event: RouterEvent) => void) =>
        flight.read((event) => onEvent(refund(event, caller, maxTokens)), signal),
    };
  }

  async #admit(model: string, signal: AbortSignal, priority: number): Promise<() => void> {
    try {
      return await this.#queues.get(model)!.acquire(signal, priority);
    } catch (err) {
      const error = TesseraError.from(err);
      throw error.code === Code.RESOURCE_EXHAUSTED ? this.#rejected(error, "queue_full") : error;
    }
  }

  /** Throws UNAUTHENTICATED unless the key is valid (or no keys are configured). */
  checkApiKey(key: string | undefined): void {
    this.#authenticate(key);
  }

  #authenticate(key: string | undefined): Caller | undefined {
    if (this.#deps.apiKeys === undefined) return undefined;
    const caller = this.#deps.apiKeys.authenticate(key);
    if (caller.error) throw this.#rejected(caller.error, "unauthenticated");
    return caller.value;
  }

  #cacheKey({ model, info, promptIds, sampling, request }: PreparedRequest): string | undefined {
    const { cache } = this.#deps.config;
    if (!(cache.enabled || cache.coalesce) || !isDeterministic(sampling)) return undefined;
    // The text differs when special tokens are left out: another entry.
    const revision = request.skipSpecialTokens ? `${info.revision}\u0000skip-special` : info.revision;
    return cacheKey(model.id, revision, promptIds, sampling);
  }

  #rejected(error: TesseraError, reason: Parameters<RouterMetrics["rejected"]>[0]): TesseraError {
    this.#deps.metrics?.rejected(reason);
    return error;
  }
}

/** At the finish, gives the caller back the tokens it was charged for but did not use. */
function refund(event: RouterEvent, caller: Caller | undefined, maxTokens: number): RouterEvent {
  if (event.type === "finish") caller?.tokens?.refund(Math.max(0, maxTokens - event.usage.completionTokens));
  return event;
}

/** A signal that also aborts, with DEADLINE_EXCEEDED, when the deadline passes. */
function withDeadline(signal: AbortSignal, deadline: number | undefined, clock: Clock): AbortSignal {
  if (deadline === undefined) return signal;
  const controller = new AbortController();
  const cancelTimer = clock.setTimer(Math.max(0, deadline - clock.now()), () =>
    controller.abort(new TesseraError(Code.DEADLINE_EXCEEDED, "the deadline passed")),
  );
  const follow = () => {
    cancelTimer();
    controller.abort(signal.reason);
  };
  if (signal.aborted) follow();
  else signal.addEventListener("abort", follow, { once: true });
  return controller.signal;
}
