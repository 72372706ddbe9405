// What the HTTP fuzzing specs check of one answer, and the steady good request that runs beside the
// fuzz traffic to show the router keeps serving others while it refuses garbage.
import assert from "node:assert/strict";

export interface Answer {
  status: number;
  /** The JSON body, or for a stream every `data:` event before [DONE] (`done` says whether it came). */
  json: unknown;
  events: unknown[];
  done: boolean;
}

export async function post(
  url: string,
  body: string | Uint8Array,
  contentType = "application/json",
): Promise<Answer> {
  const res = await fetch(url, {
    method: "POST",
    body,
    headers: contentType === "" ? {} : { "content-type": contentType },
  });
  const text = await res.text();
  if (!res.headers.get("content-type")?.startsWith("text/event-stream"))
    return { status: res.status, json: parse(text), events: [], done: false };
  const data = text
    .split("\n\n")
    .filter((e) => e.startsWith("data: "))
    .map((e) => e.slice("data: ".length));
  const done = data.at(-1) === "[DONE]";
  return { status: res.status, json: undefined, events: (done ? data.slice(0, -1) : data).map(parse), done };
}

function parse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

interface ErrorBody {
  error: { message: string; type: string; param: string | null; code: string };
}

/**
 * A refusal the client can act on: 400 naming a field of `body` (or `body` itself, or the required
 * field when it was left out) at the start of its message, 404 for a model that does not exist, 413 for
 * a body over the limit; an OpenAI error body whose type is invalid_request_error.
 */
export function assertRefusal(
  answer: Answer,
  body: Record<string, unknown> | undefined,
  required: string,
): void {
  const { status, json } = answer;
  assert.ok([400, 404, 413].includes(status), `status ${status}: ${JSON.stringify(json).slice(0, 500)}`);
  const error = (json as ErrorBody).error;
  assert.equal(typeof error?.message, "string", JSON.stringify(json).slice(0, 500));
  assert.equal(error.type, "invalid_request_error", error.message);
  if (status === 404) {
    assert.ok(typeof body?.["model"] === "string" && body["model"] !== "tiny-llama", error.message);
    return;
  }
  if (status === 413) return;
  const fields = ["body", required, ...Object.keys(body ?? {})];
  const named = fields.some((f) => [":", ".", "["].some((end) => error.message.startsWith(`${f}${end}`)));
  assert.ok(named, `the message names no field of the body: ${error.message}`);
  if (error.param !== null) assert.ok(error.message.startsWith(`${error.param}:`), error.message);
}

/** A 200 answer in OpenAI's shape: one choice with text, or a stream of chunks ending in [DONE]. */
export function assertCompleted(answer: Answer, kind: "completion" | "chat"): void {
  assert.equal(answer.status, 200, JSON.stringify(answer.json ?? answer.events).slice(0, 500));
  if (answer.json === undefined) {
    assert.ok(answer.done, `the stream did not end with [DONE]: ${JSON.stringify(answer.events.at(-1))}`);
    for (const event of answer.events) assert.ok(!("error" in (event as object)), JSON.stringify(event));
    return;
  }
  const choice = (answer.json as { choices: Record<string, unknown>[] }).choices[0];
  const message = choice?.["message"] as { content?: unknown } | undefined;
  const text = kind === "chat" ? message?.content : choice?.["text"];
  assert.equal(typeof text, "string", JSON.stringify(answer.json));
  assert.ok(["stop", "length"].includes(choice?.["finish_reason"] as string), JSON.stringify(answer.json));
}

/** Sends a good completion over and over until stopped; each must complete with 200. */
export function keepServing(baseUrl: string): { stop: () => Promise<number> } {
  let running = true;
  const loop = (async () => {
    let served = 0;
    while (running) {
      const answer = await post(
        `${baseUrl}/v1/completions`,
        JSON.stringify({ model: "tiny-llama", prompt: "Once upon a time", max_tokens: 4 }),
      );
      assertCompleted(answer, "completion");
      served++;
    }
    return served;
  })();
  loop.catch(() => {}); // reported by stop()
  return {
    stop: () => {
      running = false;
      return loop;
    },
  };
}
