// A request's sequences (n, best_of) as the router follows them: the worker generates them all from
// one prefill and streams them on one call, each message naming its sequence (GenerateResponse.index);
// here each has its own Continuation (its detokenizer and stop strings), and the request is done once
// every one is. A request of one sequence is its Continuation alone, unchanged. Several sequences are
// not split or moved between workers (resumable() is false for them): one worker holds their shared
// prompt blocks. With echo, the prompt's text opens each sequence's text.
import type { GenerateResponse } from "../../../proto/gen/tessera/v1/inference_pb.js";
import { Continuation, type SegmentKind, type SegmentRequest } from "./continuation.ts";
import type { RouterEvent } from "./router-events.ts";
import type { PreparedRequest } from "./router-request.ts";

export class Choices {
  readonly #sequences: Continuation[];
  readonly #echo: string | undefined;
  readonly #echoed: boolean[];

  constructor(prepared: PreparedRequest) {
    const n = prepared.sampling.n ?? 1;
    const first = new Continuation(prepared);
    // The worker derives sequence i's seed from the one the first carries.
    this.#sequences = [first, ...Array.from({ length: n - 1 }, () => new Continuation(prepared))];
    this.#echo = prepared.sampling.echo ? echoText(prepared) : undefined;
    this.#echoed = this.#sequences.map(() => false);
  }

  /** Tokens streamed, over every sequence. */
  get generated(): number[] {
    return this.#sequences.flatMap((s) => s.generated);
  }

  get done(): boolean {
    return this.#sequences.every((s) => s.done);
  }

  keepLocal(): void {
    this.#sequences[0]!.keepLocal();
  }

  segment(kind: SegmentKind): SegmentRequest {
    return this.#sequences[0]!.segment(kind);
  }

  /**
   * accept() handing each event to `onEvent`: the common request (one sequence, no echo, no prompt
   * logprobs) goes through its Continuation without an array or a copy per relayed message.
   */
  emit(message: GenerateResponse, kind: SegmentKind, onEvent: (event: RouterEvent) => void): void {
    const only = this.#sequences.length === 1 && this.#echo === undefined;
    if (only && message.index === 0 && message.promptLogprobs.length === 0) {
      this.#sequences[0]!.emit(message, kind, onEvent);
      return;
    }
    for (const event of this.accept(message, kind)) onEvent(event);
  }

  accept(message: GenerateResponse, kind: SegmentKind): RouterEvent[] {
    const index = message.index;
    const sequence = this.#sequences[index];
    if (sequence === undefined) return [];
    const events = sequence.accept(message, kind);
    const prompt = message.promptLogprobs.length > 0 ? message.promptLogprobs : undefined;
    return events.map((event, i) => {
      let text = event.text;
      if (this.#echo !== undefined && !this.#echoed[index]) {
        this.#echoed[index] = true;
        text = this.#echo + text;
      }
      const withPrompt = i === 0 && prompt && event.type === "tokens" ? { promptTokens: prompt } : {};
      return this.#sequences.length === 1 && index === 0
        ? { ...event, text, ...withPrompt }
        : { ...event, text, index, ...withPrompt };
    });
  }
}

/** The prompt's text as the client gave it (a text prompt), else its tokens decoded. */
function echoText({ request, promptIds, model }: PreparedRequest): string {
  return request.prompt.type === "text" ? request.prompt.text : model.tokenizer.decode(promptIds);
}
