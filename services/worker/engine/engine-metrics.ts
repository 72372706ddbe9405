// The engine's metrics (names tessera_*, units in the name). Labels: model, and the attention backend
// on the info metric; nothing per request, so cardinality stays bounded. Preemptions and the remote KV
// tier's fallbacks (by reason) start at 0, so alerts and dashboards see them before the first one.
import type { Attributes, Counter, Histogram } from "@opentelemetry/api";
import { LATENCY_BUCKETS, type Metrics } from "../../kernel/telemetry/metrics.ts";
import type { BlockPool } from "../kv/block-pool.ts";
import type { EngineRequest } from "./request.ts";
import type { Scheduler } from "./scheduler.ts";
import { totalRunning, totalWaiting } from "./virtual-engines.ts";

/** Why a remote KV block was not used (see remote-kv.ts). */
const KV_FALLBACK_REASONS = ["unavailable", "miss", "no_free_blocks", "store_failed"] as const;

export interface EngineInfo {
  model: string;
  blockSize: number;
  numBlocks: number;
  attentionBackend: string;
}

export class EngineMetrics {
  private readonly labels: Attributes;
  private readonly ttft: Histogram;
  private readonly interToken: Histogram;
  private readonly e2e: Histogram;
  private readonly queue: Histogram;
  private readonly prefill: Histogram;
  private readonly decode: Histogram;
  private readonly stepTokens: Histogram;
  private readonly preemptions: Counter;
  private readonly promptTokens: Counter;
  private readonly promptTokenSources: Counter;
  private readonly generationTokens: Counter;
  private readonly finished: Counter;

  constructor(
    metrics: Metrics,
    info: EngineInfo,
    pool: BlockPool,
    /** Every virtual engine's scheduler: the queue gauges are their sums. */
    schedulers: readonly Scheduler[],
    remote?: { stats: { fallbacks: Record<string, number> } },
  ) {
    const meter = metrics.meter("tessera.engine");
    this.labels = { model: info.model };
    const seconds = (name: string, description: string) =>
      meter.createHistogram(name, {
        description,
        unit: "s",
        advice: { explicitBucketBoundaries: LATENCY_BUCKETS },
      });
    this.ttft = seconds(
      "tessera_time_to_first_token_seconds",
      "Time from arrival to the first generated token.",
    );
    this.interToken = seconds(
      "tessera_inter_token_latency_seconds",
      "Time between consecutive tokens of a request.",
    );
    this.e2e = seconds("tessera_e2e_request_latency_seconds", "Time from arrival to the last token.");
    this.queue = seconds("tessera_request_queue_time_seconds", "Time from arrival to first scheduling.");
    this.prefill = seconds(
      "tessera_request_prefill_time_seconds",
      "Time from first scheduling to the first token.",
    );
    this.decode = seconds("tessera_request_decode_time_seconds", "Time from the first token to the last.");
    this.stepTokens = meter.createHistogram("tessera_step_batched_tokens", {
      description: "Tokens computed per engine step.",
      unit: "{token}",
      advice: { explicitBucketBoundaries: [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048] },
    });
    this.preemptions = meter.createCounter("tessera_preemptions", {
      description: "Requests preempted for KV space.",
    });
    this.preemptions.add(0, this.labels);
    this.promptTokens = meter.createCounter("tessera_prompt_tokens", {
      description: "Prompt tokens of finished requests.",
    });
    this.promptTokenSources = meter.createCounter("tessera_prompt_tokens_by_source", {
      description:
        "Prompt tokens of finished requests by where their KV came from: computed here, local_cache " +
        "(this worker's prefix cache), kv_transfer (read from the remote tier: a prefill worker's, a " +
        "migrated request's or a shared prefix), fork (another sequence of the same request computed " +
        "them: n, best_of).",
    });
    for (const source of ["computed", "local_cache", "kv_transfer", "fork"])
      this.promptTokenSources.add(0, { ...this.labels, source });
    this.generationTokens = meter.createCounter("tessera_generation_tokens", {
      description: "Generated tokens.",
    });
    this.finished = meter.createCounter("tessera_requests_finished", {
      description: "Finished requests by reason.",
    });
    const gauge = (name: string, description: string, read: () => number, unit?: string) =>
      meter
        .createObservableGauge(name, { description, ...(unit ? { unit } : {}) })
        .addCallback((r) => r.observe(read(), this.labels));
    gauge("tessera_running_requests", "Requests running.", () => totalRunning(schedulers));
    gauge("tessera_waiting_requests", "Requests waiting (including preempted).", () =>
      totalWaiting(schedulers),
    );
    gauge("tessera_kv_cache_used_blocks", "KV blocks in use.", () => pool.numUsed, "{block}");
    gauge("tessera_kv_cache_total_blocks", "KV blocks in the pool.", () => pool.numBlocks, "{block}");
    const counter = (name: string, description: string, read: () => number) =>
      meter.createObservableCounter(name, { description }).addCallback((r) => r.observe(read(), this.labels));
    counter(
      "tessera_prefix_cache_queries",
      "Full blocks looked up in the prefix cache.",
      () => pool.prefixCacheStats.queries,
    );
    counter(
      "tessera_prefix_cache_hits",
      "Full blocks found in the prefix cache.",
      () => pool.prefixCacheStats.hits,
    );
    if (remote)
      meter
        .createObservableCounter("tessera_kv_fallbacks", {
          description:
            "Remote KV blocks not used, by reason (unavailable, miss, no_free_blocks, store_failed): recomputed, or the request failed, per policy.",
        })
        .addCallback((r) => {
          for (const reason of KV_FALLBACK_REASONS)
            r.observe(remote.stats.fallbacks[reason] ?? 0, { ...this.labels, reason });
        });
    meter
      .createObservableGauge("tessera_engine_info", { description: "Engine configuration (value 1)." })
      .addCallback((r) =>
        r.observe(1, {
          model: info.model,
          block_size: String(info.blockSize),
          num_blocks: String(info.numBlocks),
          attention_backend: info.attentionBackend,
        }),
      );
  }

  step(numBatchedTokens: number, preempted: number): void {
    this.stepTokens.record(numBatchedTokens, this.labels);
    if (preempted > 0) this.preemptions.add(preempted, this.labels);
  }

  token(request: EngineRequest, now: number): void {
    const t = request.timings;
    if (t.firstToken === undefined) {
      t.firstToken = now;
      this.ttft.record((now - t.arrival) / 1000, this.labels);
    } else if (t.lastToken !== undefined) {
      this.interToken.record((now - t.lastToken) / 1000, this.labels);
    }
    t.lastToken = now;
    this.generationTokens.add(1, this.labels);
  }

  finish(request: EngineRequest, reason: string, now: number): void {
    const t = request.timings;
    this.finished.add(1, { ...this.labels, reason });
    this.promptTokens.add(request.promptLength, this.labels);
    if (request.forked) this.promptTokenSources.add(request.promptLength, { ...this.labels, source: "fork" });
    else this.promptSources(request);
    this.e2e.record((now - t.arrival) / 1000, this.labels);
    if (t.firstScheduled !== undefined) this.queue.record((t.firstScheduled - t.arrival) / 1000, this.labels);
    if (t.firstScheduled !== undefined && t.firstToken !== undefined) {
      this.prefill.record((t.firstToken - t.firstScheduled) / 1000, this.labels);
    }
    if (t.firstToken !== undefined && t.lastToken !== undefined) {
      this.decode.record((t.lastToken - t.firstToken) / 1000, this.labels);
    }
  }

  private promptSources(request: EngineRequest): void {
    // Imported blocks sit in the prefix cache when the request is first scheduled: part of its cached tokens.
    const cached = Math.min(request.numCachedPromptTokens, request.promptLength);
    const transferred = Math.min(request.numRemotePromptTokens, cached);
    this.promptTokenSources.add(request.promptLength - cached, { ...this.labels, source: "computed" });
    this.promptTokenSources.add(cached - transferred, { ...this.labels, source: "local_cache" });
    this.promptTokenSources.add(transferred, { ...this.labels, source: "kv_transfer" });
  }
}
