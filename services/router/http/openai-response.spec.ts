import assert from "node:assert/strict";
import path from "node:path";
import { create } from "@bufbuild/protobuf";
import { FinishReason, TokenInfoSchema } from "../../../proto/gen/tessera/v1/inference_pb.js";
import { Tokenizer } from "../../tokenizer/tokenizer.ts";
import type { RouterEvent } from "../core/router-events.ts";
import { hermesParser } from "../tools/hermes-parser.ts";
import {
  chunkBody,
  finishReason,
  type ResponseContext,
  responseBody,
  usageChunkBody,
} from "./openai-response.ts";

const tokenizer = Tokenizer.fromFile(
  path.resolve(import.meta.dirname, "../../worker/testdata/hf-reference/tiny-llama"),
);
const ids = tokenizer.encode("Hello world");
const token = (id: number) =>
  create(TokenInfoSchema, { tokenId: id, logprob: -0.5, topLogprobs: [{ tokenId: id, logprob: -0.5 }] });
const events: RouterEvent[] = [
  ...ids.map((id): RouterEvent => ({ type: "tokens", tokens: [token(id)], text: tokenizer.decode([id]) })),
  {
    type: "finish",
    reason: FinishReason.LENGTH,
    usage: { promptTokens: 3, completionTokens: ids.length },
    text: "",
  },
];
const texts = ids.map((id) => tokenizer.decode([id]));
const ctx = (kind: "completion" | "chat", logprobs?: number): ResponseContext => ({
  kind,
  id: "id-1",
  model: "m",
  created: 1,
  tokenizer,
  logprobs,
});

describe("OpenAI response bodies", () => {
  it("maps finish reasons", () => {
    assert.deepEqual(
      [
        FinishReason.STOP,
        FinishReason.STOP_STRING,
        FinishReason.LENGTH,
        FinishReason.CONTEXT,
        FinishReason.CANCELLED,
      ].map(finishReason),
      ["stop", "stop", "length", "length", "abort"],
    );
  });

  it("builds a whole completion with text, finish reason, usage and logprobs", () => {
    const body = responseBody(ctx("completion", 1), events);
    assert.equal(body.object, "text_completion");
    assert.equal(body.choices[0]?.finish_reason, "length");
    assert.deepEqual(body.usage, {
      prompt_tokens: 3,
      completion_tokens: ids.length,
      total_tokens: 3 + ids.length,
    });
    const choice = body.choices[0] as { text: string; logprobs: { tokens: string[]; text_offset: number[] } };
    assert.equal(choice.text, "Hello world");
    assert.deepEqual(choice.logprobs.tokens, texts);
    assert.equal(choice.logprobs.text_offset[1], texts[0]!.length);
  });

  it("builds chat chunks: the first names the role, the last has the finish reason; then the usage chunk", () => {
    const first = chunkBody(ctx("chat"), events[0]!, 0, true);
    assert.equal(first.object, "chat.completion.chunk");
    assert.deepEqual(first.choices[0], {
      index: 0,
      delta: { role: "assistant", content: texts[0] },
      logprobs: null,
      finish_reason: null,
    });
    const last = chunkBody(ctx("chat"), events.at(-1)!, 11, false);
    assert.equal((last.choices[0] as { finish_reason: string }).finish_reason, "length");
    const usage = usageChunkBody(ctx("chat"), { promptTokens: 3, completionTokens: 2 });
    assert.deepEqual(usage.choices, []);
    assert.equal(usage.usage.total_tokens, 5);
  });

  it("gives chat logprobs with bytes and alternatives", () => {
    const body = responseBody(ctx("chat", 1), events);
    const content = (
      body.choices[0] as {
        logprobs: { content: { token: string; bytes: number[]; top_logprobs: unknown[] }[] };
      }
    ).logprobs.content;
    assert.equal(content.length, ids.length);
    assert.deepEqual(content[0]?.bytes, [...Buffer.from(content[0]!.token)]);
    assert.equal(content[0]?.top_logprobs.length, 1);
  });

  it("gives one choice per sequence by index; usage counts the prompt once and sums the completions", () => {
    const two: RouterEvent[] = [
      { type: "tokens", tokens: [token(ids[0]!)], text: "a", index: 1 },
      { type: "tokens", tokens: [token(ids[1]!)], text: "b", index: 0 },
      {
        type: "finish",
        reason: FinishReason.STOP,
        usage: { promptTokens: 3, completionTokens: 1 },
        text: "",
        index: 0,
      },
      { type: "tokens", tokens: [token(ids[0]!)], text: "c", index: 1 },
      {
        type: "finish",
        reason: FinishReason.LENGTH,
        usage: { promptTokens: 3, completionTokens: 2 },
        text: "",
        index: 1,
      },
    ];
    const body = responseBody({ ...ctx("completion"), n: 2 }, two);
    assert.deepEqual(
      body.choices.map((c) => [c.index, (c as { text: string }).text, c.finish_reason]),
      [
        [0, "b", "stop"],
        [1, "ac", "length"],
      ],
    );
    assert.deepEqual(body.usage, { prompt_tokens: 3, completion_tokens: 3, total_tokens: 6 });
    const chunk = chunkBody({ ...ctx("chat"), n: 2 }, two[0]!, 0, true);
    assert.equal(chunk.choices[0]?.index, 1);
  });

  it("echo with logprobs opens each choice's logprobs with the prompt tokens (the first null)", () => {
    const promptTokens = [
      create(TokenInfoSchema, { tokenId: ids[0]!, logprob: Number.NaN }),
      create(TokenInfoSchema, {
        tokenId: ids[1]!,
        logprob: -2,
        topLogprobs: [{ tokenId: ids[1]!, logprob: -2 }],
      }),
    ];
    const echoed: RouterEvent[] = [
      { ...(events[0] as RouterEvent & { type: "tokens" }), promptTokens },
      ...events.slice(1),
    ];
    const body = responseBody({ ...ctx("completion", 1), echo: true }, echoed);
    const logprobs = (
      body.choices[0] as {
        logprobs: {
          tokens: string[];
          token_logprobs: (number | null)[];
          top_logprobs: unknown[];
          text_offset: number[];
        };
      }
    ).logprobs;
    assert.equal(logprobs.tokens.length, 2 + ids.length);
    assert.deepEqual(logprobs.token_logprobs.slice(0, 3), [null, -2, -0.5]);
    assert.equal(logprobs.top_logprobs[0], null);
    assert.deepEqual(logprobs.text_offset.slice(0, 2), [0, texts[0]!.length]);
  });

  it("gives vLLM's prompt_logprobs: null first, then {id: {logprob, rank, decoded_token}}; per choice, or top-level in chat", () => {
    const promptTokens = [
      create(TokenInfoSchema, { tokenId: ids[0]!, logprob: Number.NaN }),
      create(TokenInfoSchema, {
        tokenId: ids[1]!,
        logprob: -3,
        topLogprobs: [{ tokenId: 7, logprob: -0.1 }],
      }),
    ];
    const withPrompt: RouterEvent[] = [
      { ...(events[0] as RouterEvent & { type: "tokens" }), promptTokens },
      ...events.slice(1),
    ];
    const completion = responseBody({ ...ctx("completion"), promptLogprobs: 1 }, withPrompt);
    const expected = [
      null,
      {
        [ids[1]!]: { logprob: -3, decoded_token: texts[1] },
        7: { logprob: -0.1, rank: 1, decoded_token: tokenizer.decode([7]) },
      },
    ];
    assert.deepEqual((completion.choices[0] as { prompt_logprobs: unknown }).prompt_logprobs, expected);
    const chat = responseBody({ ...ctx("chat"), promptLogprobs: 1 }, withPrompt);
    assert.deepEqual(chat.prompt_logprobs, expected);
    const unasked = responseBody(ctx("completion"), withPrompt).choices[0]!;
    assert.equal("prompt_logprobs" in unasked, false, "only when asked");
  });

  it("answers tool calls as an assistant message with tool_calls, finish_reason tool_calls when the model stopped", () => {
    const text = 'Checking.<tool_call>{"name": "f", "arguments": {"a": 1}}</tool_call>';
    const finish = (reason: FinishReason): RouterEvent => ({
      type: "finish",
      reason,
      usage: { promptTokens: 3, completionTokens: 9 },
      text: "",
    });
    const tools: ResponseContext = { ...ctx("chat"), tools: { parser: hermesParser, parallel: true } };
    const body = responseBody(tools, [{ type: "tokens", tokens: [], text }, finish(FinishReason.STOP)]);
    const choice = body.choices[0] as {
      message: { content: string; tool_calls: { id: string; function: unknown }[] };
      finish_reason: string;
    };
    assert.equal(choice.finish_reason, "tool_calls");
    assert.equal(choice.message.content, "Checking.");
    assert.deepEqual(choice.message.tool_calls[0]?.function, { name: "f", arguments: '{"a": 1}' });
    const cut = responseBody(tools, [
      { type: "tokens", tokens: [], text: "<tool_call>{" },
      finish(FinishReason.LENGTH),
    ]);
    assert.deepEqual(cut.choices[0], {
      index: 0,
      message: { role: "assistant", content: "<tool_call>{" },
      logprobs: null,
      finish_reason: "length",
    });
    const chunk = chunkBody(tools, finish(FinishReason.STOP), 0, false, undefined, {
      delta: { content: "", toolCalls: [{ index: 0, function: { arguments: "}" } }] },
      called: true,
    });
    assert.deepEqual(chunk.choices[0], {
      index: 0,
      delta: { tool_calls: [{ index: 0, function: { arguments: "}" } }] },
      logprobs: null,
      finish_reason: "tool_calls",
    });
  });
});
