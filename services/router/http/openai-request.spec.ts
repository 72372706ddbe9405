import assert from "node:assert/strict";
import { parseChatRequest, parseCompletionRequest } from "./openai-request.ts";

describe("OpenAI request bodies", () => {
  it("maps a completion, leaving unset what the body leaves out (max_tokens defaults to 16)", () => {
    const parsed = parseCompletionRequest({ model: "m", prompt: "Hi", stop: "\n", seed: 7 }).value!;
    assert.deepEqual(parsed.prompt, { type: "text", text: "Hi" });
    // Unset, not 1: the model's default applies first, OpenAI's temperature 1 only where it has none.
    for (const field of ["temperature", "topP", "topK", "minP", "repetitionPenalty"] as const)
      assert.equal(parsed.sampling[field], undefined, field);
    assert.equal(
      parseCompletionRequest({ prompt: "Hi", temperature: null }).value?.sampling.temperature,
      undefined,
    );
    assert.equal(parsed.sampling.maxTokens, 16);
    assert.deepEqual(parsed.sampling.stop, ["\n"]);
    assert.equal(parsed.sampling.seed, 7);
    assert.equal(parsed.stream, false);
    assert.equal(parsed.logprobs, undefined);
  });

  it("refuses a field it does not know, naming it, instead of dropping it", () => {
    const unknown = parseCompletionRequest({ prompt: "Hi", use_beam_search: true }).error;
    assert.equal(unknown?.message, "use_beam_search: not a parameter of /v1/completions that Tessera knows");
    const chat = parseChatRequest({
      messages: [{ role: "user", content: "Hi" }],
      guided_whitespace_pattern: " ",
    }).error;
    assert.equal(
      chat?.message,
      "guided_whitespace_pattern: not a parameter of /v1/chat/completions that Tessera knows",
    );
    for (const bad of [-1, 1.5, "3"]) {
      assert.match(parseCompletionRequest({ prompt: "Hi", min_tokens: bad }).error!.message, /^min_tokens: /);
    }
    assert.match(
      parseCompletionRequest({ prompt: "Hi", logit_bias: { "5": "a lot" } }).error!.message,
      /^logit_bias\.5: /,
    );
    assert.match(
      parseChatRequest({
        messages: [{ role: "user", content: "Hi" }],
        response_format: { type: "xml" },
      }).error!.message,
      /^response_format\.type: /,
    );
    // What changes no output is taken: OpenAI's bookkeeping fields, the neutral values of the others.
    const neutral = {
      prompt: "Hi",
      user: "u-1",
      metadata: { team: "a" },
      logit_bias: {},
      min_tokens: 0,
      skip_special_tokens: true,
    };
    const parsed = parseCompletionRequest(neutral);
    assert.equal(parsed.error, undefined);
    assert.equal(parsed.value?.skipSpecialTokens, true);
  });

  it("takes Tessera's disable_speculation extension, a boolean", () => {
    assert.equal(
      parseCompletionRequest({ prompt: "Hi", disable_speculation: true }).value?.sampling.disableSpeculation,
      true,
    );
    assert.equal(parseCompletionRequest({ prompt: "Hi" }).value?.sampling.disableSpeculation, undefined);
    assert.match(
      parseCompletionRequest({ prompt: "Hi", disable_speculation: "yes" }).error!.message,
      /^disable_speculation: /,
    );
  });

  it("takes token-id prompts, vLLM's extra fields and stream options", () => {
    const parsed = parseCompletionRequest({
      model: "m",
      prompt: [[1, 2, 3]],
      temperature: 0,
      top_k: -1,
      ignore_eos: true,
      min_tokens: 4,
      logprobs: 2,
      stream: true,
      stream_options: { include_usage: true },
    }).value!;
    assert.deepEqual(parsed.prompt, { type: "tokens", ids: [1, 2, 3] });
    assert.equal(parsed.sampling.temperature, 0);
    assert.equal(parsed.sampling.topK, 0, "top_k -1 is off");
    assert.equal(parsed.sampling.ignoreEos, true);
    assert.equal(parsed.sampling.minTokens, 4);
    assert.equal(parsed.sampling.logprobs, 2);
    assert.equal(parsed.logprobs, 2);
    assert.deepEqual([parsed.stream, parsed.includeUsage], [true, true]);
  });

  it("maps a chat request: text parts joined by newlines (as vLLM), max_completion_tokens first, logprobs only when asked", () => {
    const parsed = parseChatRequest({
      model: "m",
      messages: [
        { role: "system", content: "Be brief." },
        {
          role: "user",
          content: [
            { type: "text", text: "Hel" },
            { type: "text", text: "lo" },
          ],
        },
      ],
      max_tokens: 5,
      max_completion_tokens: 9,
      logprobs: true,
      top_logprobs: 3,
    }).value!;
    assert.deepEqual(parsed.prompt, {
      type: "chat",
      messages: [
        { role: "system", content: "Be brief." },
        { role: "user", content: "Hel\nlo" },
      ],
      options: {
        addGenerationPrompt: undefined,
        continueFinalMessage: undefined,
        kwargs: undefined,
        template: undefined,
      },
    });
    assert.equal(parsed.sampling.maxTokens, 9);
    assert.equal(parsed.logprobs, 3);
    // top_logprobs alone is refused rather than ignored (as vLLM does).
    assert.match(
      parseChatRequest({ messages: [{ role: "user", content: "x" }], top_logprobs: 3 }).error?.message ?? "",
      /^top_logprobs: /,
    );
  });

  it("takes n, best_of, echo, logit_bias and prompt_logprobs into the sampling parameters", () => {
    const parsed = parseCompletionRequest({
      prompt: "x",
      n: 2,
      best_of: 3,
      echo: true,
      logprobs: 2,
      logit_bias: { "7": 100, "9": -5 },
    }).value!;
    assert.equal(parsed.n, 2);
    assert.equal(parsed.echo, true);
    assert.deepEqual(
      {
        n: parsed.sampling.n,
        bestOf: parsed.sampling.bestOf,
        echo: parsed.sampling.echo,
        logitBias: parsed.sampling.logitBias,
        promptLogprobs: parsed.sampling.promptLogprobs,
      },
      // echo with logprobs asks the worker for the prompt tokens' logprobs, with as many alternatives.
      { n: 2, bestOf: 3, echo: true, logitBias: { "7": 100, "9": -5 }, promptLogprobs: 2 },
    );
    const chat = parseChatRequest({ messages: [{ role: "user", content: "x" }], n: 4, prompt_logprobs: 0 });
    assert.equal(chat.value?.n, 4);
    assert.equal(chat.value?.promptLogprobs, 0);
    assert.match(
      parseChatRequest({ messages: [{ role: "user", content: "x" }], best_of: 2 }).error!.message,
      /^best_of: not a parameter/,
    );
  });

  it("refuses what it cannot honour, naming the parameter", () => {
    const error = (raw: unknown) => parseCompletionRequest(raw).error?.message ?? "";
    assert.match(error({ prompt: "x", n: 0 }), /^n: /);
    assert.match(error({ prompt: "x", echo: "yes" }), /^echo: /);
    // best_of > n is chosen at the end: nothing to stream before (OpenAI refuses it too).
    assert.match(error({ prompt: "x", n: 2, best_of: 3, stream: true }), /^best_of: /);
    assert.match(error({ prompt: "x", suffix: "y" }), /^suffix: /);
    assert.match(error({ prompt: ["a", "b"] }), /^prompt: /);
    assert.match(error({ prompt: "x", temperature: 3 }), /^temperature: /);
    assert.match(error({ prompt: "x", max_tokens: 0 }), /^max_tokens: /);
    assert.match(error({}), /^prompt: /);
    const chat = (raw: unknown) => parseChatRequest(raw).error?.message ?? "";
    assert.match(chat({ messages: [] }), /^messages: /);
    assert.match(
      chat({ messages: [{ role: "user", content: [{ type: "image_url", image_url: {} }] }] }),
      /^messages\.0\.content/,
    );
    assert.match(chat({ messages: [{ role: "user", content: "x" }], tools: [{}] }), /^tools\.0\.type: /);
    const messages = [{ role: "user", content: "x" }];
    assert.match(chat({ messages, add_generation_prompt: "yes" }), /^add_generation_prompt: /);
    assert.match(chat({ messages, continue_final_message: 1 }), /^continue_final_message: /);
    assert.match(chat({ messages, chat_template_kwargs: [true] }), /^chat_template_kwargs: /);
    assert.match(chat({ messages, chat_template: 3 }), /^chat_template: /);
  });

  it("takes vLLM's chat fields: add_generation_prompt, continue_final_message, chat_template_kwargs, chat_template", () => {
    const parsed = parseChatRequest({
      messages: [{ role: "assistant", content: "Once" }],
      add_generation_prompt: false,
      continue_final_message: true,
      chat_template_kwargs: { enable_thinking: false },
      chat_template: "tool_use",
    }).value!;
    assert.deepEqual(parsed.prompt, {
      type: "chat",
      messages: [{ role: "assistant", content: "Once" }],
      options: {
        addGenerationPrompt: false,
        continueFinalMessage: true,
        kwargs: { enable_thinking: false },
        template: "tool_use",
      },
    });
  });

  describe("structured outputs", () => {
    const chat = (extra: Record<string, unknown>) =>
      parseChatRequest({ messages: [{ role: "user", content: "Hi" }], ...extra });
    const schema = { type: "object", properties: { a: { type: "integer" } }, required: ["a"] };

    it("maps response_format and vLLM's guided_* fields to one constraint, naming the field that set it", () => {
      const cases: [Record<string, unknown>, unknown, string | undefined][] = [
        [{ response_format: { type: "text" } }, undefined, undefined],
        [{ response_format: { type: "json_object" } }, { kind: "json_object" }, "response_format"],
        [
          { response_format: { type: "json_schema", json_schema: { name: "a", schema, strict: true } } },
          { kind: "json_schema", schema, strict: true },
          "response_format.json_schema.schema",
        ],
        [
          { response_format: { type: "json_schema", json_schema: { name: "a" } } },
          { kind: "json_object" },
          "response_format.json_schema.schema",
        ],
        [{ guided_json: schema }, { kind: "json_schema", schema, strict: false }, "guided_json"],
        [
          { guided_json: JSON.stringify(schema) },
          { kind: "json_schema", schema, strict: false },
          "guided_json",
        ],
        [{ guided_regex: "[0-9]+" }, { kind: "regex", pattern: "[0-9]+" }, "guided_regex"],
        [{ guided_choice: ["a", "b"] }, { kind: "choice", choices: ["a", "b"] }, "guided_choice"],
        [{ guided_grammar: 'root ::= "x"' }, { kind: "grammar", grammar: 'root ::= "x"' }, "guided_grammar"],
      ];
      for (const [extra, structured, field] of cases) {
        const parsed = chat(extra);
        assert.equal(parsed.error, undefined, JSON.stringify(extra));
        assert.deepEqual(parsed.value!.sampling.structured, structured, JSON.stringify(extra));
        assert.equal(parsed.value!.structuredField, field);
      }
      // Completions take them too, as vLLM's do.
      const completion = parseCompletionRequest({ prompt: "Hi", guided_choice: ["x"] }).value!;
      assert.deepEqual(completion.sampling.structured, { kind: "choice", choices: ["x"] });
    });

    it("refuses two constraints at once and malformed ones, naming the field", () => {
      const cases: [Record<string, unknown>, RegExp][] = [
        [
          { response_format: { type: "json_object" }, guided_regex: "a" },
          /^guided_regex: only one structured/,
        ],
        [{ guided_choice: ["a"], guided_grammar: 'root ::= "a"' }, /^guided_grammar: only one/],
        [{ guided_json: "{not json" }, /^guided_json: is not JSON/],
        [{ guided_choice: [] }, /^guided_choice: /],
        [{ guided_choice: ["a", ""] }, /^guided_choice: a choice must not be empty/],
        [{ guided_regex: "" }, /^guided_regex: the regex must not be empty/],
        [
          { response_format: { type: "json_schema", json_schema: { schema } } },
          /^response_format\.json_schema\.name: /,
        ],
        [
          { response_format: { type: "json_schema", json_schema: { name: "a", schema: 3 } } },
          /^response_format\.json_schema\.schema: /,
        ],
      ];
      for (const [extra, message] of cases) assert.match(chat(extra).error?.message ?? "(accepted)", message);
    });
  });
});
