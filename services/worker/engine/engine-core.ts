// The engine loop: schedule -> run the model on the batch -> sample, stop checks, stream out.
// It runs while there is work and sleeps otherwise; the model runs in its own thread, so the event
// loop stays free to serve requests during a step.

import type { FinishReason, GeneratedToken } from "../../inference/types.ts";
import { Code, TesseraError } from "../../kernel/errors.ts";
import type { Logger } from "../../kernel/log.ts";
import type { KvCacheManager } from "../kv/kv-cache-manager.ts";
import type { ModelRunner, SampledRow, StepResult } from "../runtime/model-runner.ts";
import { logitRowCount, type SequenceStep } from "../runtime/step-inputs.ts";
import { promptTokenLogprob } from "../sampling/prompt-logprobs.ts";
import { NO_DRAFT } from "../speculative/draft.ts";
import type { SpecDecoder } from "../speculative/spec-decoder.ts";
import { verifyDraft } from "../speculative/verify-draft.ts";
import type { EngineMetrics } from "./engine-metrics.ts";
import { forkSequences } from "./fork.ts";
import { appendToken, finishEvents, type OutputLimits } from "./output-processor.ts";
import type { RemoteKv } from "./remote-kv.ts";
import { type EngineRequest, RequestStatus } from "./request.ts";
import { recordPhases } from "./request-phases.ts";
import type { ScheduledRequest, Scheduler, SchedulerOutput } from "./scheduler.ts";

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
  private promptTokensComputed = 0;
  /** Copies of forked sequences' prompt tail blocks, awaited before the next step runs. */
  private pendingCopies: Promise<void>[] = [];

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

  /** Prompt tokens whose K/V this engine computed (not taken from a cache or a fork), since start. */
  get numPromptTokensComputed(): number {
    return this.promptTokensComputed;
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
        for (const r of out.rejected) {
          r.events.fail(r.error);
          // Its other sequences were waiting for its prefill: they fail with it.
          for (const child of r.forks.splice(0)) child.events.fail(r.error);
        }
        for (const s of out.scheduled) this.unpin(s.request);
        this.metrics?.step(out.numBatchedTokens, out.preempted.length);
        if (out.scheduled.length === 0) {
          await new Promise((resolve) => setImmediate(resolve));
          continue;
        }
        await this.step(out);
        if (this.pendingCopies.length > 0) {
          const copies = this.pendingCopies;
          this.pendingCopies = [];
          await Promise.all(copies);
        }
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
      // A sequence others fork from is sampled here too, beside them, from the logits row they share.
      const sampling =
        runnerSamples && needsLogits && numDraft === 0 && request.forks.length === 0
          ? request.sampler.prepare(request.numTokens, request.history, maskOf(request))
          : undefined;
      seqs.push({
        numPast,
        numNew,
        blockTable: request.kv.blocks,
        needsLogits,
        promptLength: request.promptLength,
        ...logitsAsk(s),
        ...(sampling && { sampling }),
      });
    }
    let result: StepResult;
    try {
      const running = this.runner.step(tokens, seqs);
      // Structured outputs: the masks of this step's rows are filled while the model thread runs it.
      if (!runnerSamples) fillMasks(out);
      result = await running;
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
    for (const scheduled of out.scheduled) {
      const { request, numPast, numNew, needsLogits, numDraft } = scheduled;
      const ask = logitsAsk(scheduled);
      const first = row;
      row += logitRowCount({ numNew, needsLogits, ...ask });
      const at = needsLogits ? row - 1 : -1;
      if (request.isFinished) continue;
      if (request.cancelRequested) {
        this.finish(request, "cancelled");
        continue;
      }
      this.promptTokensComputed += Math.max(0, Math.min(numPast + numNew, request.promptLength) - numPast);
      if (numDraft > 0) {
        this.verify(request, logits.subarray(first * vocabSize, row * vocabSize), numNew, numDraft, now);
        continue;
      }
      if (ask.promptLogits) this.promptLogprobs(request, logits, first, numPast, numNew);
      request.numComputedTokens += numNew;
      const hashedBefore = request.kv.hashes.length;
      kv.cacheComputedBlocks(request.kv, request.tokens, request.numComputedTokens);
      if (this.remote?.options.writeThrough && request.kv.hashes.length > hashedBefore)
        this.storeBlocks(this.remote, request, hashedBefore);
      if (at < 0) continue;
      let reason: FinishReason | undefined;
      try {
        const { constraint } = request;
        // A complete grammar allows only eos: the request ends here, spending no token on it.
        constraint?.mask();
        if (constraint?.complete) {
          this.finish(request, "stop");
          continue;
        }
        const row = logits.subarray(at * vocabSize, (at + 1) * vocabSize);
        // A mask writes -Infinity into its row: sequences forking from this row get it as the model gave it.
        const shared = request.forks.length > 0 && constraint ? row.slice() : row;
        const token = tokens
          ? sampledToken(tokens[at])
          : request.sampler.sample(row, request.numTokens, request.history, constraint?.mask());
        if (constraint && !constraint.accept(token.tokenId)) {
          throw new TesseraError(Code.INTERNAL, `structured output: token ${token.tokenId} left the grammar`);
        }
        this.metrics?.token(request, now);
        request.timings.firstToken ??= now;
        request.timings.lastToken = now;
        reason = appendToken(request, token, this.limits);
        // An eos the grammar accepted ends it even under ignore_eos.
        if (reason === undefined && constraint?.terminated) reason = "stop";
        // After the parent's first token (so sequence 0 opens the stream), before it can finish.
        if (request.forks.length > 0) this.fork(request, shared, now);
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

  /** Prompt entries from the rows of positions numPast.. (row r predicts the token after position r). */
  private promptLogprobs(
    request: EngineRequest,
    logits: Float32Array,
    first: number,
    numPast: number,
    numNew: number,
  ): void {
    const { vocabSize } = this;
    const entries = request.promptTokens!;
    const top = request.sampling.promptLogprobs ?? 0;
    for (let i = 0; i < numNew; i++) {
      const next = numPast + i + 1;
      if (next >= request.promptLength) break;
      const row = logits.subarray((first + i) * vocabSize, (first + i + 1) * vocabSize);
      entries[next] = promptTokenLogprob(row, request.tokens[next]!, top);
    }
  }

  /**
   * The parent's prompt is computed: its waiting sequences take its blocks and their first token from
   * its row (each by its own seed), then run as requests of their own.
   */
  private fork(parent: EngineRequest, row: Float32Array, now: number): void {
    const forks = parent.forks;
    parent.forks = [];
    const copy = forkSequences(parent, forks, this.kv, this.runner);
    if (copy) this.pendingCopies.push(copy);
    for (const child of forks) {
      if (child.kv.blocks.length === 0) {
        // No room for its tail block: it computes its prompt itself (from the prefix cache).
        this.scheduler.add(child);
        continue;
      }
      let reason: FinishReason | undefined;
      try {
        // Each sequence has a matcher of its own (engine.ts opens one per sequence).
        const { constraint } = child;
        const token = child.sampler.sample(row, child.numTokens, child.history, constraint?.mask());
        if (constraint && !constraint.accept(token.tokenId)) {
          throw new TesseraError(Code.INTERNAL, `structured output: token ${token.tokenId} left the grammar`);
        }
        this.metrics?.token(child, now);
        child.timings.firstToken ??= now;
        child.timings.lastToken = now;
        reason = appendToken(child, token, this.limits);
        if (reason === undefined && constraint?.terminated) reason = "stop";
      } catch (err) {
        this.fail(child, TesseraError.from(err));
        continue;
      }
      if (reason) this.finish(child, reason);
      else this.scheduler.add(child);
    }
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
    request.constraint?.dispose();
    // Sequences still waiting to fork from it end with it (cancelled or failed before its prefill).
    for (const child of request.forks.splice(0)) this.finish(child, reason);
    this.unpin(request);
    this.spec?.release(request);
    this.scheduler.remove(request);
    finishEvents(request, reason);
    this.metrics?.finish(request, reason, this.now());
    recordPhases(request, this.now());
  }

  private fail(request: EngineRequest, error: TesseraError): void {
    if (request.status === RequestStatus.FINISHED) return;
    request.constraint?.dispose();
    for (const child of request.forks.splice(0)) this.fail(child, error);
    this.unpin(request);
    this.spec?.release(request);
    this.scheduler.remove(request);
    request.error = error;
    request.events.fail(error);
    this.metrics?.finish(request, "error", this.now());
    recordPhases(request, this.now());
  }
}

/**
 * The logits rows a scheduled row asks beyond its last token's (step-inputs.ts, logitRowCount): every
 * new token's while a request wanting prompt logprobs computes its prompt, or a speculative row's
 * numDraft + 1. step() sends it and postprocess() walks the rows by it, so both read the same count.
 * A request asking prompt logprobs is never speculated (SpecDecoder), so the two never meet.
 */
function logitsAsk({
  request,
  numPast,
  numDraft,
}: ScheduledRequest): Pick<SequenceStep, "promptLogits" | "numLogits"> {
  const promptLogits = request.wantsPromptLogits && numPast < request.promptLength;
  if (promptLogits && numDraft > 0)
    throw new TesseraError(Code.INTERNAL, `request ${request.id}: a speculative row asking prompt logits`);
  return { ...(promptLogits && { promptLogits }), ...(numDraft > 0 && { numLogits: numDraft + 1 }) };
}

/** The mask of a constrained request's next token; undefined for an unconstrained one. */
function maskOf(request: EngineRequest): Int32Array | undefined {
  return request.constraint?.mask();
}

/**
 * Fills the next-token masks of the step's constrained rows. A failure here is left for postprocess,
 * which asks for the same mask again and fails that request alone.
 */
function fillMasks(out: SchedulerOutput): void {
  for (const { request, needsLogits } of out.scheduled) {
    if (!needsLogits || request.constraint === undefined) continue;
    try {
      request.constraint.mask();
    } catch {
      // postprocess reports it
    }
  }
}

/** A row the runner sampled; a row it could not sample fails its request with the reason. */
function sampledToken(row: SampledRow | undefined): GeneratedToken {
  if (row === undefined)
    throw new TesseraError(Code.INTERNAL, "the runner returned fewer sampled rows than asked");
  if ("error" in row) throw new TesseraError(Code.INTERNAL, row.error);
  return row;
}
