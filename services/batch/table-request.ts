// A row of a table (CSV, Parquet) as a batch request, and a result as the columns added to that row.
// The row has a `prompt` column (text: /v1/completions) or a `messages` column (a JSON list of
// {role, content}: /v1/chat/completions), and optionally sampling columns named as OpenAI's body
// fields (max_tokens, temperature, ...); an empty cell leaves the field unset. Every other column is
// carried through to the output unchanged. A row is identified by its `custom_id` column when it has
// one, else by its position (`row-1` is the first data row), which is what a resumed run matches.
import type { BatchItem, BatchResult } from "./batch-types.ts";

const NUMBER_COLUMNS = [
  "max_tokens",
  "max_completion_tokens",
  "temperature",
  "top_p",
  "top_k",
  "min_p",
  "repetition_penalty",
  "presence_penalty",
  "frequency_penalty",
  "seed",
  "min_tokens",
] as const;
const BOOLEAN_COLUMNS = ["ignore_eos", "skip_special_tokens"] as const;
const JSON_COLUMNS = ["stop_token_ids"] as const;
const STRING_COLUMNS = ["model"] as const;

/** The columns a request is read from (the rest are carried through). */
export const REQUEST_COLUMNS: readonly string[] = [
  "prompt",
  "messages",
  "stop",
  ...NUMBER_COLUMNS,
  ...BOOLEAN_COLUMNS,
  ...JSON_COLUMNS,
  ...STRING_COLUMNS,
];

/** The columns each row's result adds, in this order. */
export const RESULT_COLUMNS = [
  "output",
  "finish_reason",
  "prompt_tokens",
  "completion_tokens",
  "error",
] as const;
export type ResultColumns = {
  output: string | null;
  finish_reason: string | null;
  prompt_tokens: number | null;
  completion_tokens: number | null;
  error: string | null;
};

/** Refuses a table whose columns cannot make requests, naming the problem. */
export function checkColumns(columns: readonly string[]): string | undefined {
  const clash = columns.find((c) => (RESULT_COLUMNS as readonly string[]).includes(c));
  if (clash) return `the input has a column "${clash}", which the results add; rename it`;
  if (!columns.includes("prompt") && !columns.includes("messages"))
    return `the input needs a "prompt" or a "messages" column (it has ${columns.join(", ") || "none"})`;
  return undefined;
}

/** `index` is the row's 0-based position among the data rows. */
export function rowItem(row: Record<string, unknown>, index: number): BatchItem {
  const customId = cellText(row["custom_id"]) || `row-${index + 1}`;
  const invalid = (field: string, message: string): BatchItem => ({
    type: "invalid",
    customId,
    error: { code: "invalid_request", message: `row ${index + 1}: ${field}: ${message}` },
  });
  const body: Record<string, unknown> = {};
  for (const name of NUMBER_COLUMNS) {
    const value = row[name];
    if (isEmpty(value)) continue;
    const n = typeof value === "bigint" ? Number(value) : typeof value === "string" ? Number(value) : value;
    body[name] = typeof n === "number" && Number.isNaN(n) ? value : n;
  }
  for (const name of BOOLEAN_COLUMNS) {
    const value = row[name];
    if (isEmpty(value)) continue;
    body[name] = value === "true" ? true : value === "false" ? false : value;
  }
  for (const name of STRING_COLUMNS) if (!isEmpty(row[name])) body[name] = cellText(row[name]);
  for (const name of [...JSON_COLUMNS, "stop"]) {
    const value = row[name];
    if (isEmpty(value)) continue;
    const text = cellText(value);
    if (name === "stop" && !text.startsWith("[")) {
      body[name] = text;
      continue;
    }
    const parsed = parseJson(value);
    if (parsed.error) return invalid(name, parsed.error);
    body[name] = parsed.value;
  }
  if (!isEmpty(row["messages"])) {
    const messages = parseJson(row["messages"]);
    if (messages.error) return invalid("messages", messages.error);
    body["messages"] = messages.value;
    return { type: "request", request: { customId, url: "/v1/chat/completions", body } };
  }
  if (isEmpty(row["prompt"])) return invalid("prompt", "empty (set prompt or messages)");
  body["prompt"] = cellText(row["prompt"]);
  return { type: "request", request: { customId, url: "/v1/completions", body } };
}

/** The columns a result adds to its row. */
export function resultColumns(result: BatchResult): ResultColumns {
  const empty = { output: null, finish_reason: null, prompt_tokens: null, completion_tokens: null };
  if (result.error) return { ...empty, error: result.error.message };
  const body = result.response?.body as ResponseBody | undefined;
  if (result.response?.status_code !== 200 || body === undefined) {
    const message = body?.error?.message ?? `status ${result.response?.status_code}`;
    return { ...empty, error: message };
  }
  const choice = body.choices?.[0];
  return {
    output: choice?.text ?? choice?.message?.content ?? "",
    finish_reason: choice?.finish_reason ?? null,
    prompt_tokens: body.usage?.prompt_tokens ?? null,
    completion_tokens: body.usage?.completion_tokens ?? null,
    error: null,
  };
}

interface ResponseBody {
  choices?: { text?: string; message?: { content?: string }; finish_reason?: string }[];
  usage?: { prompt_tokens?: number; completion_tokens?: number };
  error?: { message?: string };
}

function isEmpty(value: unknown): boolean {
  return value === undefined || value === null || value === "";
}

function cellText(value: unknown): string {
  if (value === undefined || value === null) return "";
  return typeof value === "string"
    ? value
    : typeof value === "object"
      ? JSON.stringify(value)
      : String(value);
}

/** A JSON cell: CSV gives its text; Parquet may give the value itself (a JSON or list column). */
function parseJson(
  value: unknown,
): { value: unknown; error?: undefined } | { value?: undefined; error: string } {
  if (typeof value !== "string") return { value };
  try {
    return { value: JSON.parse(value) };
  } catch (err) {
    return { error: `not JSON: ${(err as Error).message}` };
  }
}
