// One line of an OpenAI batch input file as a BatchItem. A line that is not JSON, has no custom_id, a
// method other than POST or a url Tessera does not serve becomes an error record naming the field; the
// body itself is validated later by the endpoint that runs it (the same parser as the HTTP door), so a
// bad body gets the 400 answer that endpoint would give.
import { z } from "zod";
import { BATCH_ENDPOINTS, type BatchItem } from "./batch-types.ts";

const lineSchema = z.object({
  custom_id: z.string().min(1),
  method: z.literal("POST", "only POST is supported"),
  url: z.enum(BATCH_ENDPOINTS, `must be one of ${BATCH_ENDPOINTS.join(", ")}`),
  body: z.record(z.string(), z.unknown()),
});

/** `lineNumber` (1-based) names a line that has no custom_id of its own. */
export function parseBatchLine(text: string, lineNumber: number): BatchItem {
  const fallbackId = `line-${lineNumber}`;
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    const message = `line ${lineNumber} is not JSON: ${(err as Error).message}`;
    return { type: "invalid", customId: fallbackId, error: { code: "invalid_json", message } };
  }
  const parsed = lineSchema.safeParse(raw);
  if (parsed.success) {
    const { custom_id, url, body } = parsed.data;
    return { type: "request", request: { customId: custom_id, url, body } };
  }
  const customId =
    typeof (raw as { custom_id?: unknown })?.custom_id === "string" &&
    (raw as { custom_id: string }).custom_id !== ""
      ? (raw as { custom_id: string }).custom_id
      : fallbackId;
  const issue = parsed.error.issues[0];
  const field = issue?.path.map(String).join(".") || "line";
  return {
    type: "invalid",
    customId,
    error: {
      code: "invalid_request",
      message: `line ${lineNumber}: ${field}: ${issue?.message ?? "invalid"}`,
    },
  };
}
