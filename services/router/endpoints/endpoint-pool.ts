// The endpoints the router may send requests to, kept in step with discovery: each one gets a
// channel, a health watch (and one on its KV transfer path), a load poller and its model list
// (ListModels, retried with backoff and asked again whenever the endpoint comes back to SERVING,
// since it may have restarted with other weights). Endpoints removed by discovery are closed;
// requests in flight on them finish. A role change keeps the endpoint and its channel.
import { Inference } from "../../../proto/gen/tessera/v1/inference_pb.js";
import { Backoff, type BackoffConfig } from "../../kernel/backoff.ts";
import type { Clock } from "../../kernel/clock.ts";
import type { Logger } from "../../kernel/log.ts";
import { checkHealth } from "../../rpc/health-client.ts";
import { Endpoint, type EndpointOptions, type EndpointSpec, endpointChannelOptions } from "./endpoint.ts";
import { type HealthStatus, HealthWatch } from "./health-watch.ts";
import { LoadPoller } from "./load-poller.ts";

export interface EndpointPoolOptions {
  clock: Clock;
  log: Logger;
  endpoint: EndpointOptions;
  /**
   * Watch grpc.health.v1 on every endpoint (off: endpoints count as SERVING), for `service` and for
   * `kvService`, the KV transfer path (off: only prefill and decode endpoints count as having one).
   */
  health: { watch: boolean; service: string; kvService: string; reconnect: BackoffConfig };
  /** How often to ask each endpoint for its load (0: never). */
  loadPollMs: number;
  /** Called when endpoints come or go, change health or report their models. */
  onChange: () => void;
  /** Called when an endpoint is ejected for `ms` (metrics). */
  onEjected?: (endpoint: string, ms: number) => void;
}

interface Entry {
  endpoint: Endpoint;
  watch: HealthWatch | undefined;
  kvWatch: HealthWatch | undefined;
  poller: LoadPoller | undefined;
  cancelModelsTimer: (() => void) | undefined;
  closed: boolean;
}

const LIST_MODELS_TIMEOUT_MS = 5_000;

export class EndpointPool {
  readonly #options: EndpointPoolOptions;
  readonly #entries = new Map<string, Entry>();

  constructor(options: EndpointPoolOptions) {
    this.#options = options;
  }

  get endpoints(): Endpoint[] {
    return [...this.#entries.values()].map((e) => e.endpoint);
  }

  get(name: string): Endpoint | undefined {
    return this.#entries.get(name)?.endpoint;
  }

  /** The endpoints that reported serving `modelId`, eligible or not. */
  serving(modelId: string): Endpoint[] {
    return this.endpoints.filter((e) => e.serves(modelId));
  }

  /** Makes the pool match `specs`: new names are added, missing ones closed, moved ones replaced. */
  update(specs: readonly EndpointSpec[]): void {
    const wanted = new Map(specs.map((s) => [s.name, s]));
    let changed = false;
    for (const [name, entry] of this.#entries) {
      if (wanted.get(name)?.address === entry.endpoint.address) continue;
      this.#close(entry);
      this.#entries.delete(name);
      this.#options.log.info({ endpoint: name }, "endpoint removed");
      changed = true;
    }
    for (const spec of wanted.values()) {
      const existing = this.#entries.get(spec.name)?.endpoint;
      if (existing && existing.role !== (spec.role ?? "both")) {
        this.#options.log.info({ endpoint: spec.name, from: existing.role, to: spec.role }, "endpoint role");
        existing.role = spec.role ?? "both";
        if (!this.#options.health.watch) existing.kvHealth = assumedKvHealth(existing);
        changed = true;
      }
      if (existing) continue;
      this.#entries.set(spec.name, this.#open(spec));
      this.#options.log.info(
        { endpoint: spec.name, address: spec.address, role: spec.role ?? "both" },
        "endpoint added",
      );
      changed = true;
    }
    if (changed) this.#options.onChange();
  }

  close(): void {
    for (const entry of this.#entries.values()) this.#close(entry);
    this.#entries.clear();
  }

  #open(spec: EndpointSpec): Entry {
    const { clock, log, health } = this.#options;
    const { security, reconnect } = this.#options.endpoint;
    const channelOptions = endpointChannelOptions(reconnect);
    const endpoint = new Endpoint(spec, this.#options.endpoint, {
      probe: async () => (await checkHealth(spec.address, health.service, 2_000, security)) === "SERVING",
      ejected: (ms) => {
        log.warn({ endpoint: spec.name, ejectionMs: ms }, "endpoint ejected after failures");
        this.#options.onEjected?.(spec.name, ms);
        this.#options.onChange();
      },
      readmitted: () => {
        log.info({ endpoint: spec.name }, "endpoint readmitted after a passing probe");
        this.#options.onChange();
      },
    });
    const entry: Entry = {
      endpoint,
      watch: undefined,
      kvWatch: undefined,
      poller: undefined,
      cancelModelsTimer: undefined,
      closed: false,
    };
    if (health.watch) {
      entry.watch = new HealthWatch(spec.address, {
        service: health.service,
        backoff: health.reconnect,
        clock,
        ...(security && { security }),
        channelOptions,
        onStatus: (status) => this.#healthChanged(entry, status),
      });
      entry.watch.start();
      entry.kvWatch = new HealthWatch(spec.address, {
        service: health.kvService,
        backoff: health.reconnect,
        clock,
        ...(security && { security }),
        channelOptions,
        unimplemented: "SERVICE_UNKNOWN",
        onStatus: (status) => this.#kvHealthChanged(entry, status),
      });
      entry.kvWatch.start();
    } else {
      endpoint.health = "SERVING";
      endpoint.kvHealth = assumedKvHealth(endpoint);
    }
    if (this.#options.loadPollMs > 0) {
      entry.poller = new LoadPoller(endpoint.client, {
        intervalMs: this.#options.loadPollMs,
        clock,
        active: () => endpoint.health === "SERVING",
        onReport: (report) => {
          endpoint.load = report;
        },
      });
      entry.poller.start();
    }
    void this.#fetchModels(entry, new Backoff(health.reconnect));
    return entry;
  }

  #healthChanged(entry: Entry, status: HealthStatus): void {
    const { endpoint } = entry;
    const previous = endpoint.health;
    if (previous === status) return;
    endpoint.health = status;
    this.#options.log.info(
      { endpoint: endpoint.name, role: endpoint.role, from: previous, to: status },
      "endpoint health changed",
    );
    if (status === "SERVING" && previous === "UNREACHABLE")
      void this.#fetchModels(entry, new Backoff(this.#options.health.reconnect));
    this.#options.onChange();
  }

  #kvHealthChanged(entry: Entry, status: HealthStatus): void {
    const { endpoint } = entry;
    if (endpoint.kvHealth === status) return;
    this.#options.log.info(
      { endpoint: endpoint.name, role: endpoint.role, from: endpoint.kvHealth, to: status },
      "endpoint KV transfer health changed",
    );
    endpoint.kvHealth = status;
    this.#options.onChange();
  }

  async #fetchModels(entry: Entry, backoff: Backoff): Promise<void> {
    entry.cancelModelsTimer?.();
    const { endpoint } = entry;
    try {
      const { models } = await endpoint.client.unary(
        Inference.method.listModels,
        {},
        { deadline: Date.now() + LIST_MODELS_TIMEOUT_MS },
      );
      if (entry.closed) return;
      endpoint.models = models;
      this.#options.log.info({ endpoint: endpoint.name, models: models.map((m) => m.id) }, "endpoint models");
      this.#options.onChange();
    } catch (err) {
      if (entry.closed) return;
      const ms = backoff.next();
      this.#options.log.debug(
        { endpoint: endpoint.name, err: String(err), retryMs: ms },
        "ListModels failed",
      );
      entry.cancelModelsTimer = this.#options.clock.setTimer(
        ms,
        () => void this.#fetchModels(entry, backoff),
      );
    }
  }

  #close(entry: Entry): void {
    entry.closed = true;
    entry.cancelModelsTimer?.();
    entry.watch?.stop();
    entry.kvWatch?.stop();
    entry.poller?.stop();
    entry.endpoint.close();
  }
}

/** Without health watching, the roles say it: disaggregated workers have a KV tier, colocated ones not. */
function assumedKvHealth(endpoint: Endpoint): HealthStatus {
  return endpoint.role === "both" ? "SERVICE_UNKNOWN" : "SERVING";
}
