// The engine loop: schedule -> run the model on the batch -> sample, stop checks, stream out.
// It runs while there is work and sleeps otherwise; the model runs in its own thread, so the event
// loop stays free to serve requests during a step.

import type { FinishReason, GeneratedToken } from "../../inference/types.ts";
import { Code, TesseraError } from "../../kernel/errors.ts";
import type { Logger } from "../../kernel/log.ts";
import type { KvCacheManager } from "../kv/kv-cache-manager.ts";
import type { ModelRunner, SampledRow, StepResult } from "../runtime/model-runner.ts";
import type { SequenceStep } from "../runtime/step-inputs.ts";
import { NO_DRAFT } from "../speculative/draft.ts";
import type { SpecDecoder } from "../speculative/spec-decoder.ts";
import { verifyDraft } from "../speculative/verify-draft.ts";
import type { EngineMetrics } from "./engine-metrics.ts";
import { appendToken, finishEvents, type OutputLimits } from "./output-processor.ts";
import type { RemoteKv } from "./remote-kv.ts";
import { type EngineRequest, RequestStatus } from "./request.ts";
import { recordPhases } from "./request-phases.ts";
import type { Scheduler, SchedulerOutput } from "./scheduler.ts";

export interface EngineCoreParts {
  runner: ModelRunner;
  scheduler: Scheduler;
  kv: KvCacheManager;
  metrics: EngineMetrics | undefined;
  limits: OutputLimits;
  vocabSize: number;
  log: Logger | undefined;
  remote?: RemoteKv | undefined;
  /** Speculative decoding (`--speculative-config`), shared by the engine's scheduling loops. */
  spec?: SpecDecoder | undefined;
  now?: () => number;
}

export class EngineCore {
  private readonly runner: ModelRunner;
  private readonly scheduler: Scheduler;
  private readonly kv: KvCacheManager;
  private readonly metrics: EngineMetrics | undefined;
  private readonly limits: OutputLimits;
  private readonly vocabSize: number;
  private readonly log: Logger | undefined;
  private readonly remote: RemoteKv | undefined;
  private readonly spec: SpecDecoder | undefined;
  private readonly now: () => number;
  private loopActive = false;
  private steps = 0;

  constructor(parts: EngineCoreParts) {
    this.runner = parts.runner;
    this.scheduler = parts.scheduler;
    this.kv = parts.kv;
    this.metrics = parts.metrics;
    this.limits = parts.limits;
    this.vocabSize = parts.vocabSize;
    this.log = parts.log;
    this.remote = parts.remote;
    this.spec = parts.spec;
    this.now = parts.now ?? Date.now;
  }

  get numSteps(): number {
    return this.steps;
  }

  submit(request: EngineRequest): void {
    request.timings.submitted = this.now();
    this.scheduler.add(request);
    if (!this.loopActive) {
      this.loopActive = true;
      void this.loop();
    }
  }

  private async loop(): Promise<void> {
    const { scheduler } = this;
    try {
      while (scheduler.hasWork) {
        this.reap();
        if (!scheduler.hasWork) break;
        if (this.spec) await this.spec.propose(scheduler.running);
        const out = scheduler.schedule();
        for (const r of out.rejected) r.events.fail(r.error);
        for (const s of out.scheduled) this.unpin(s.request);
        this.metrics?.step(out.numBatchedTokens, out.preempted.length);
        if (out.scheduled.length === 0) {
          await new Promise((resolve) => setImmediate(resolve));
          continue;
        }
        await this.step(out);
      }
    } catch (err) {
      this.log?.error({ err }, "engine loop failed");
      const error = TesseraError.from(err);
      for (const r of [...scheduler.running, ...scheduler.waiting]) this.fail(r, error);
    } finally {
      this.loopActive = false;
    }
  }

  private async step(out: SchedulerOutput): Promise<void> {
    const seqs: SequenceStep[] = [];
    const tokens = new Int32Array(out.numBatchedTokens);
    let offset = 0;
    const now = this.now();
    // A runner that samples where the logits are (a parallel replica's last stage) gets each row's
    // sampling: the draw of the token's position under the request's seed and the ids its penalties
    // touch. A row with logits predicts the token at index numTokens (nothing is appended before
    // postprocess), the same index whichever worker holds the request: a continuation's prompt is
    // the original prompt plus the tokens streamed so far.
    const runnerSamples = this.runner.samplesRows === true;
    for (const s of out.scheduled) {
      const { request, numPast, numNew, needsLogits, numDraft } = s;
      request.timings.firstScheduled ??= now;
      tokens.set(request.tokens.slice(numPast, numPast + numNew - numDraft), offset);
      if (numDraft > 0) tokens.set(request.draft.tokens.slice(0, numDraft), offset + numNew - numDraft);
      offset += numNew;
      // A speculative row's logits come back whole: they are verified here, not sampled by the runner.
      const sampling =
        runnerSamples && needsLogits && numDraft === 0
          ? request.sampler.prepare(request.numTokens, request.history)
          : undefined;
      seqs.push({
        numPast,
        numNew,
        blockTable: request.kv.blocks,
        needsLogits,
        ...(numDraft > 0 && { numLogits: numDraft + 1 }),
        promptLength: request.promptLength,
        ...(sampling && { sampling }),
      });
    }
    let result: StepResult;
    try {
      result = await this.runner.step(tokens, seqs);
    } catch (err) {
      const error = TesseraError.from(err);
      this.log?.error({ err: error.message }, "model step failed");
      for (const s of out.scheduled) this.fail(s.request, error);
      return;
    }
    this.steps++;
    this.postprocess(out, result);
  }

  private postprocess(out: SchedulerOutput, { logits, tokens }: StepResult): void {
    const { kv, vocabSize } = this;
    let row = 0;
    const now = this.now();
    for (const { request, numNew, needsLogits, numDraft } of out.scheduled) {
      const at = needsLogits ? row : -1;
      if (needsLogits) row += numDraft + 1;
      if (request.isFinished) continue;
      if (request.cancelRequested) {
        this.finish(request, "cancelled");
        continue;
      }
      if (numDraft > 0) {
        this.verify(
          request,
          logits.subarray(at * vocabSize, (at + numDraft + 1) * vocabSize),
          numNew,
          numDraft,
          now,
        );
        continue;
      }
      request.numComputedTokens += numNew;
      const hashedBefore = request.kv.hashes.length;
      kv.cacheComputedBlocks(request.kv, request.tokens, request.numComputedTokens);
      if (this.remote?.options.writeThrough && request.kv.hashes.length > hashedBefore)
        this.storeBlocks(this.remote, request, hashedBefore);
      if (at < 0) continue;
      let reason: FinishReason | undefined;
      try {
        const token = tokens
          ? sampledToken(tokens[at])
          : request.sampler.sample(
              logits.subarray(at * vocabSize, (at + 1) * vocabSize),
              request.numTokens,
              request.history,
            );
        this.metrics?.token(request, now);
        request.timings.firstToken ??= now;
        request.timings.lastToken = now;
        reason = appendToken(request, token, this.limits);
      } catch (err) {
        this.fail(request, TesseraError.from(err));
        continue;
      }
      if (reason) this.finish(request, reason);
    }
  }

  /**
   * A speculative row: its pending token and the proposals it accepted are now in the cache; the slots
   * of rejected proposals are released and the blocks that became full are registered.
   */
  private verify(
    request: EngineRequest,
    rows: Float32Array,
    numNew: number,
    numDraft: number,
    now: number,
  ): void {
    const { kv } = this;
    let verified: ReturnType<typeof verifyDraft>;
    try {
      verified = verifyDraft(request, rows, this.vocabSize, numDraft, this.limits, () => {
        this.metrics?.token(request, now);
        request.timings.firstToken ??= now;
        request.timings.lastToken = now;
      });
    } catch (err) {
      this.fail(request, TesseraError.from(err));
      return;
    }
    this.spec?.verified(numDraft, verified.accepted);
    request.numComputedTokens += numNew - numDraft + verified.accepted;
    request.draft = NO_DRAFT;
    if (verified.reason) {
      this.finish(request, verified.reason);
      return;
    }
    kv.trim(request.kv, request.numComputedTokens + 1);
    const hashedBefore = request.kv.hashes.length;
    kv.cacheComputedBlocks(request.kv, request.tokens, request.numComputedTokens);
    if (this.remote?.options.writeThrough && request.kv.hashes.length > hashedBefore)
      this.storeBlocks(this.remote, request, hashedBefore);
  }

  /** Stores the blocks that just became full (exported now, before any later step can reuse them). */
  private storeBlocks(remote: RemoteKv, request: EngineRequest, from: number): void {
    const bs = this.kv.blockSize;
    request.timings.firstKvWrite ??= this.now();
    const refs = request.kv.hashes.slice(from).map((hash, i) => ({
      hash,
      tokens: request.tokens.slice((from + i) * bs, (from + i + 1) * bs),
    }));
    request.kvWrites.push(remote.store(request.kv.blocks.slice(from, request.kv.hashes.length), refs));
  }

  /** Drops the references that kept a request's imported blocks alive until the request held them. */
  private unpin(request: EngineRequest): void {
    if (request.pinnedBlocks.length === 0) return;
    this.kv.pool.release(request.pinnedBlocks);
    request.pinnedBlocks = [];
  }

  /** Ends cancelled and expired requests before the next step, freeing their blocks. */
  private reap(): void {
    const { scheduler } = this;
    const now = this.now();
    for (const r of [...scheduler.running, ...scheduler.waiting]) {
      if (r.cancelRequested) this.finish(r, "cancelled");
      else if (r.deadline !== undefined && now > r.deadline) {
        this.fail(r, new TesseraError(Code.DEADLINE_EXCEEDED, `request ${r.id} passed its deadline`));
      }
    }
  }

  private finish(request: EngineRequest, reason: FinishReason): void {
    if (request.status === RequestStatus.FINISHED) return;
    this.unpin(request);
    this.spec?.release(request);
    this.scheduler.remove(request);
    finishEvents(request, reason);
    this.metrics?.finish(request, reason, this.now());
    recordPhases(request, this.now());
  }

  private fail(request: EngineRequest, error: TesseraError): void {
    if (request.status === RequestStatus.FINISHED) return;
    this.unpin(request);
    this.spec?.release(request);
    this.scheduler.remove(request);
    request.error = error;
    request.events.fail(error);
    this.metrics?.finish(request, "error", this.now());
    recordPhases(request, this.now());
  }
}

/** A row the runner sampled; a row it could not sample fails its request with the reason. */
function sampledToken(row: SampledRow | undefined): GeneratedToken {
  if (row === undefined)
    throw new TesseraError(Code.INTERNAL, "the runner returned fewer sampled rows than asked");
  if ("error" in row) throw new TesseraError(Code.INTERNAL, row.error);
  return row;
}
