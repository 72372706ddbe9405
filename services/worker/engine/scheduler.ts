// The scheduler owns the waiting and running queues and the per-step token budget. Scheduling counts
// tokens, not phases: each request's numComputedTokens catches up with its token count, so a prefill
// chunk and a decode step are the same thing. Each step:
//   1. running requests, in serving order, get their pending tokens (one for decode, up to the budget
//      for an unfinished prefill); when the KV pool has no room, the running request served last is
//      preempted (its blocks freed, its progress reset: it is recomputed when it returns);
//   2. if nobody was preempted, waiting requests are admitted in serving order (priority, then FCFS)
//      while the budget, the running cap and the KV pool allow, reusing their cached prefix blocks.
import { Code, TesseraError } from "../../kernel/errors.ts";
import type { KvCacheManager } from "../kv/kv-cache-manager.ts";
import { NO_DRAFT } from "../speculative/draft.ts";
import { type EngineRequest, RequestStatus, servesBefore } from "./request.ts";

export interface SchedulerLimits {
  /** Tokens computed per step, over all requests (chunked prefill splits prompts to fit). */
  maxNumBatchedTokens: number;
  /** Requests running at once. */
  maxNumSeqs: number;
}

export interface ScheduledRequest {
  request: EngineRequest;
  numPast: number;
  numNew: number;
  /** The step computes the request's last pending token, so its next token is sampled. */
  needsLogits: boolean;
  /** Speculative proposals computed after the pending tokens (request.draft), verified by this step. */
  numDraft: number;
}

export interface SchedulerOutput {
  scheduled: ScheduledRequest[];
  preempted: EngineRequest[];
  /** Requests that can never fit in the KV pool, removed from the queues. */
  rejected: EngineRequest[];
  numBatchedTokens: number;
}

export class Scheduler {
  readonly waiting: EngineRequest[] = [];
  readonly running: EngineRequest[] = [];
  /** Preemptions since start. */
  numPreemptions = 0;
  readonly kv: KvCacheManager;
  private readonly limits: SchedulerLimits;

  constructor(kv: KvCacheManager, limits: SchedulerLimits) {
    this.kv = kv;
    this.limits = limits;
  }

  get hasWork(): boolean {
    return this.waiting.length > 0 || this.running.length > 0;
  }

  add(request: EngineRequest): void {
    request.status = RequestStatus.WAITING;
    insertSorted(this.waiting, request);
  }

  /** Removes a request from the queues and frees its blocks at once (finish, cancel, error). */
  remove(request: EngineRequest): void {
    for (const queue of [this.waiting, this.running]) {
      const i = queue.indexOf(request);
      if (i >= 0) queue.splice(i, 1);
    }
    this.kv.free(request.kv);
    request.status = RequestStatus.FINISHED;
  }

  schedule(): SchedulerOutput {
    const out: SchedulerOutput = { scheduled: [], preempted: [], rejected: [], numBatchedTokens: 0 };
    let budget = this.limits.maxNumBatchedTokens;
    for (let i = 0; i < this.running.length && budget > 0; i++) {
      const request = this.running[i]!;
      const numNew = Math.min(request.numPendingTokens + request.draft.tokens.length, budget);
      if (numNew === 0) continue;
      if (!this.makeRoom(request, request.numComputedTokens + numNew, out)) break;
      budget -= numNew;
      this.push(out, request, numNew);
    }
    if (out.preempted.length === 0) budget = this.admit(budget, out);
    out.numBatchedTokens = this.limits.maxNumBatchedTokens - budget;
    return out;
  }

  /** Allocates room for `totalTokens`, preempting from the back of the running queue; false if `request` itself had to go. */
  private makeRoom(request: EngineRequest, totalTokens: number, out: SchedulerOutput): boolean {
    while (!this.kv.allocate(request.kv, totalTokens)) {
      const victim = this.running.at(-1)!;
      if (victim === request && this.running.length === 1) {
        this.reject(
          request,
          out,
          `needs ${Math.ceil(totalTokens / this.kv.blockSize)} KV blocks, the pool holds ${this.kv.capacity}`,
        );
        return false;
      }
      this.preempt(victim, out);
      if (victim === request) return false;
    }
    return true;
  }

  private admit(budget: number, out: SchedulerOutput): number {
    while (this.waiting.length > 0 && budget > 0 && this.running.length < this.limits.maxNumSeqs) {
      const request = this.waiting[0]!;
      const fresh = request.kv.blocks.length === 0;
      // Prompt logprobs need every prompt position computed: such a request takes nothing from the cache.
      const cached =
        fresh && !request.wantsPromptLogits
          ? this.kv.findCachedPrefix(request.tokens)
          : { blocks: [], hashes: [] };
      const numPast = fresh ? cached.blocks.length * this.kv.blockSize : request.numComputedTokens;
      const numNew = Math.min(request.numTokens - numPast, budget);
      if (!this.kv.allocate(request.kv, numPast + numNew, cached)) {
        if (this.running.length === 0 && out.scheduled.length === 0) {
          this.waiting.shift();
          this.reject(request, out, `needs more KV blocks than the pool's ${this.kv.capacity}`);
          continue;
        }
        break;
      }
      this.waiting.shift();
      if (fresh && request.numPreemptions === 0) request.numCachedPromptTokens = numPast;
      request.numComputedTokens = numPast;
      request.status = RequestStatus.RUNNING;
      insertSorted(this.running, request);
      budget -= numNew;
      this.push(out, request, numNew);
    }
    return budget;
  }

  private push(out: SchedulerOutput, request: EngineRequest, numNew: number): void {
    const numPast = request.numComputedTokens;
    const numDraft = Math.max(0, numPast + numNew - request.numTokens);
    out.scheduled.push({
      request,
      numPast,
      numNew,
      needsLogits: numPast + numNew >= request.numTokens,
      numDraft,
    });
    out.numBatchedTokens += numNew;
  }

  private preempt(request: EngineRequest, out: SchedulerOutput): void {
    this.running.splice(this.running.indexOf(request), 1);
    this.kv.free(request.kv);
    request.draft = NO_DRAFT;
    request.numComputedTokens = 0;
    request.numPreemptions++;
    this.numPreemptions++;
    request.status = RequestStatus.PREEMPTED;
    insertSorted(this.waiting, request);
    out.preempted.push(request);
  }

  private reject(request: EngineRequest, out: SchedulerOutput, why: string): void {
    this.remove(request);
    request.error = new TesseraError(Code.RESOURCE_EXHAUSTED, `request ${request.id} ${why}`);
    out.rejected.push(request);
  }
}

function insertSorted(queue: EngineRequest[], request: EngineRequest): void {
  let i = queue.length;
  while (i > 0 && servesBefore(request, queue[i - 1]!) < 0) i--;
  queue.splice(i, 0, request);
}
