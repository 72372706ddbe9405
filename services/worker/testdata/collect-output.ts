// A request's stream as the specs compare it: the generated ids, the text and why it ended.
import type { FinishReason, GenerateEvent } from "../../inference/types.ts";

export interface Output {
  ids: number[];
  text: string;
  reason: FinishReason | undefined;
}

export async function collectOutput(stream: AsyncIterable<GenerateEvent>): Promise<Output> {
  const out: Output = { ids: [], text: "", reason: undefined };
  for await (const e of stream) {
    out.text += e.textDelta;
    if (e.type === "tokens") out.ids.push(...e.tokens.map((t) => t.tokenId));
    else out.reason = e.reason;
  }
  return out;
}
