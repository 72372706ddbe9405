// A tessera.v1.Inference Generate call, as a RouterRequest: the prompt (text, token ids, or a chat
// that the router renders with the model's template) and sampling fields from the message; the API key
// (`authorization: Bearer KEY`), the session key (routing.sessionHeader, by default `x-session-id`)
// and the deadline from the call. priority and kv, which only a worker takes, are refused.
import { randomUUID } from "node:crypto";
import type { Metadata } from "@grpc/grpc-js";
import type { GenerateRequest } from "../../../proto/gen/tessera/v1/inference_pb.js";
import { chatPromptFromMessage } from "../../inference/chat-prompt.ts";
import { structuredFromMessage } from "../../inference/structured-output.ts";
import { type Result, TesseraError } from "../../kernel/errors.ts";
import type { RouterPrompt, RouterRequest } from "../core/router-request.ts";

export function fromGrpc(
  message: GenerateRequest,
  metadata: Pick<Metadata, "get">,
  deadline: Date | number,
  sessionHeader: string,
): Result<RouterRequest> {
  const prompt = promptOf(message.prompt);
  if (prompt.error) return prompt;
  // Fields of a worker's request the router cannot honour for a client, refused rather than dropped:
  // it keeps no queue of its own to order by priority, and it sets kv itself (disaggregated serving).
  if (message.priority !== 0)
    return { error: TesseraError.invalidArgument("priority", "is not honoured by the router; leave it 0") };
  if (message.kv !== undefined)
    return { error: TesseraError.invalidArgument("kv", "is set by the router itself; leave it unset") };
  const { $typeName: _, structured: wire, ...fields } = message.sampling ?? { $typeName: "" };
  const structured = structuredFromMessage(wire);
  if (structured.error) return structured;
  // A client names no matched tokens: only the router's own continuations do.
  const sampling = { ...fields, ...(structured.value && { structured: structured.value.structured }) };
  const at = deadline instanceof Date ? deadline.getTime() : deadline;
  return {
    value: {
      requestId: message.requestId || randomUUID(),
      model: message.model,
      prompt: prompt.value,
      sampling,
      sessionKey: header(metadata, sessionHeader),
      apiKey: bearer(header(metadata, "authorization")) ?? header(metadata, "x-api-key"),
      deadline: Number.isFinite(at) ? at : undefined,
      // The router writes the text: it leaves special tokens out itself (the OpenAI door's field too).
      skipSpecialTokens: message.sampling?.skipSpecialTokens,
    },
  };
}

function promptOf(prompt: GenerateRequest["prompt"]): Result<RouterPrompt> {
  switch (prompt.case) {
    case "text":
      return { value: { type: "text", text: prompt.value } };
    case "tokenIds":
      return { value: { type: "tokens", ids: prompt.value.ids } };
    case "chat":
      return { value: { type: "chat", ...chatPromptFromMessage(prompt.value) } };
    default:
      return { error: TesseraError.invalidArgument("prompt", "set text, token_ids or chat") };
  }
}

function header(metadata: Pick<Metadata, "get">, name: string): string | undefined {
  const value = metadata.get(name)[0];
  return typeof value === "string" && value !== "" ? value : undefined;
}

export function bearer(value: string | undefined): string | undefined {
  const match = value?.match(/^Bearer\s+(\S+)$/i);
  return match?.[1];
}
