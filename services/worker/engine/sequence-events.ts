// The events of a request's sequences (SamplingParams.n, best_of) as one stream, each event tagged with
// its sequence's index. With n sequences they interleave as they come. With best_of > n every sequence
// is generated and held until all have finished; then the n with the highest cumulative logprob (the
// sum of their tokens' logprobs, as vLLM and OpenAI chose) go out, best first, indexed 0..n-1 in that
// order, each whole. Breaking off the stream cancels every sequence; one failing fails the stream.
import type { GenerateEvent, PromptToken } from "../../inference/types.ts";
import { EventQueue } from "./event-queue.ts";

export function mergeSequences(
  sequences: readonly AsyncIterable<GenerateEvent>[],
  n: number,
  cancel: () => void,
): AsyncIterable<GenerateEvent> {
  const out = new EventQueue<GenerateEvent>(cancel);
  const held: GenerateEvent[][] = sequences.map(() => []);
  const score = sequences.map(() => 0);
  const holding = sequences.length > n;
  let open = sequences.length;
  sequences.forEach(async (events, index) => {
    try {
      for await (const event of events) {
        if (event.type === "tokens") for (const t of event.tokens) score[index]! += t.logprob;
        if (holding) held[index]!.push(event);
        else out.push({ ...event, index });
      }
    } catch (err) {
      // One sequence failed: the request fails, and its other sequences stop.
      out.fail(err);
      cancel();
      return;
    }
    if (--open > 0) return;
    if (holding) {
      const best = [...score.keys()].sort((a, b) => score[b]! - score[a]! || a - b).slice(0, n);
      // The prompt's entries came with sequence 0, which may not be among the best: they go first.
      let prompt: PromptToken[] | undefined;
      for (const e of held[0]!) if (e.type === "tokens" && e.promptTokens) prompt ??= e.promptTokens;
      best.forEach((from, index) => {
        for (const event of held[from]!) {
          if (event.type !== "tokens") {
            out.push({ ...event, index });
            continue;
          }
          const { promptTokens: _, ...rest } = event;
          out.push({ ...rest, index, ...(prompt && { promptTokens: prompt }) });
          prompt = undefined;
        }
      });
    }
    out.end();
  });
  return out;
}
