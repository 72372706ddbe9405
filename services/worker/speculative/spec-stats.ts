// Speculative decoding's counts and their Prometheus metrics, labelled by model and method:
//   tessera_spec_decode_drafts_total          verification steps of a request that had proposals
//   tessera_spec_decode_draft_tokens_total    tokens proposed (and verified)
//   tessera_spec_decode_accepted_tokens_total proposals accepted
//   tessera_spec_decode_acceptance_rate       accepted / proposed, since start
//   tessera_spec_decode_mean_accepted_length  1 + accepted / drafts: tokens a verification step emits on
//                                             average (vLLM's "mean acceptance length", bonus token included)
import type { Metrics } from "../../kernel/telemetry/metrics.ts";
import type { SpeculativeMethod } from "./speculative-config.ts";

export class SpecStats {
  drafts = 0;
  draftTokens = 0;
  accepted = 0;

  record(numDraft: number, accepted: number): void {
    this.drafts++;
    this.draftTokens += numDraft;
    this.accepted += accepted;
  }

  get acceptanceRate(): number {
    return this.draftTokens === 0 ? 0 : this.accepted / this.draftTokens;
  }

  get meanAcceptedLength(): number {
    return this.drafts === 0 ? 0 : 1 + this.accepted / this.drafts;
  }

  /** Exports the counts (read at each scrape). */
  observe(metrics: Metrics, model: string, method: SpeculativeMethod): void {
    const meter = metrics.meter("tessera.speculative");
    const labels = { model, method };
    const counter = (name: string, description: string, read: () => number) =>
      meter.createObservableCounter(name, { description }).addCallback((r) => r.observe(read(), labels));
    const gauge = (name: string, description: string, read: () => number) =>
      meter.createObservableGauge(name, { description }).addCallback((r) => r.observe(read(), labels));
    counter(
      "tessera_spec_decode_drafts",
      "Verification steps of requests with proposals.",
      () => this.drafts,
    );
    counter(
      "tessera_spec_decode_draft_tokens",
      "Speculative tokens proposed and verified.",
      () => this.draftTokens,
    );
    counter("tessera_spec_decode_accepted_tokens", "Speculative tokens accepted.", () => this.accepted);
    gauge(
      "tessera_spec_decode_acceptance_rate",
      "Accepted / proposed tokens since start.",
      () => this.acceptanceRate,
    );
    gauge(
      "tessera_spec_decode_mean_accepted_length",
      "Tokens emitted per verification step on average (1 + accepted / drafts).",
      () => this.meanAcceptedLength,
    );
  }
}
