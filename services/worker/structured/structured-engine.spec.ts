import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { createCheckpoint } from "../../../devtools/model-factory/create-checkpoint.ts";
import { greedySampling } from "../../inference/sampling-params.ts";
import type { FinishReason, SamplingParams, StructuredOutput } from "../../inference/types.ts";
import { Code, TesseraError } from "../../kernel/errors.ts";
import { Engine } from "../engine/engine.ts";
import { allowedIds } from "../sampling/allowed-tokens.ts";
import { collectOutput } from "../testdata/collect-output.ts";
import { schemaProblem } from "../testdata/json-schema-check.ts";
import { Grammars } from "./grammars.ts";

const SCHEMAS: Record<string, unknown>[] = [
  {
    type: "object",
    properties: {
      // A pattern keeps the random model's strings short and ASCII: xgrammar lets a string take
      // byte tokens that make an overlong UTF-8 sequence, which decodes to U+FFFD (see README).
      name: { type: "string", pattern: "^[a-z]{1,6}$" },
      age: { type: "integer", minimum: 0, maximum: 99 },
      ok: { type: "boolean" },
    },
    required: ["name", "age", "ok"],
  },
  {
    type: "object",
    properties: {
      color: { enum: ["red", "green", "blue"] },
      sizes: { type: "array", items: { type: "integer", minimum: 1, maximum: 9 }, maxItems: 3 },
    },
    required: ["color", "sizes"],
  },
  {
    type: "object",
    properties: {
      point: {
        type: "object",
        properties: {
          x: { type: "integer", minimum: -9, maximum: 9 },
          y: { type: "integer", minimum: -9, maximum: 9 },
        },
        required: ["x", "y"],
      },
      label: { const: "p" },
    },
    required: ["point", "label"],
  },
];

describe("Engine with structured outputs (random-weights tiny Llama)", function () {
  this.timeout(120_000);
  let dir: string;
  let engine: Engine;
  let prompt: number[];
  let nextId = 0;
  const generate = (sampling: Partial<SamplingParams>, promptIds = prompt) =>
    collectOutput(
      engine.generate({
        requestId: `s${nextId++}`,
        promptIds,
        sampling: { ...greedySampling({ maxTokens: 60 }), ...sampling },
      }),
    );

  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "tessera-structured-"));
    await createCheckpoint({ arch: "llama", preset: "tiny", seed: 3, out: dir });
    engine = await Engine.load(dir, { threads: 1 });
    prompt = engine.tokenizer.encode("Reply in JSON:", { addSpecialTokens: false });
  });
  after(async () => {
    await engine.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it("every json_schema completion parses and validates unless max_tokens cut it, batched with unconstrained rows that it leaves alone", async () => {
    const free = { maxTokens: 20, ignoreEos: true };
    const alone = await generate(free);
    const runs = Array.from({ length: 12 }, (_, i) => {
      const schema = SCHEMAS[i % SCHEMAS.length]!;
      const structured: StructuredOutput = { kind: "json_schema", schema, strict: i % 2 === 0 };
      return generate({ temperature: 1, seed: BigInt(i), structured }).then((out) => ({ out, schema }));
    });
    const beside = generate(free);
    let finished = 0;
    for (const { out, schema } of await Promise.all(runs)) {
      if (out.reason === "length") continue;
      assert.equal(out.reason, "stop", out.text);
      finished++;
      const problem = schemaProblem(schema, JSON.parse(out.text));
      assert.equal(problem, undefined, `${out.text}: ${problem}`);
    }
    assert.ok(finished >= 8, `only ${finished} of 12 finished within max_tokens`);
    assert.deepEqual((await beside).ids, alone.ids, "an unconstrained row in the same batch is not masked");
  });

  it("n sequences forked from one prefill each follow the constraint with a matcher of their own", async () => {
    const choices = ["alpha", "beta", "gamma", "delta"];
    const texts = ["", "", "", ""];
    const reasons: (FinishReason | undefined)[] = [];
    const stream = engine.generate({
      requestId: `s${nextId++}`,
      promptIds: prompt,
      sampling: {
        ...greedySampling({ maxTokens: 20 }),
        temperature: 1,
        seed: 11n,
        n: 4,
        structured: { kind: "choice", choices },
      },
    });
    for await (const e of stream) {
      const i = e.index ?? 0;
      texts[i] += e.textDelta;
      if (e.type !== "tokens") reasons[i] = e.reason;
    }
    for (const [i, text] of texts.entries()) {
      assert.ok(choices.includes(text), `sequence ${i}: ${JSON.stringify(text)}`);
      assert.equal(reasons[i], "stop");
    }
  });

  it("json_object, choice, regex and grammar outputs match their constraint and end with stop", async () => {
    const object = await generate({
      temperature: 1,
      seed: 5n,
      structured: { kind: "json_object" },
      maxTokens: 200,
    });
    if (object.reason === "stop") assert.equal(typeof JSON.parse(object.text), "object");
    const choices = ["yes", "no", "maybe later"];
    for (let seed = 0n; seed < 4n; seed++) {
      const out = await generate({ temperature: 1, seed, structured: { kind: "choice", choices } });
      assert.ok(choices.includes(out.text), out.text);
      assert.equal(out.reason, "stop");
    }
    const regex = await generate({
      temperature: 1,
      seed: 2n,
      structured: { kind: "regex", pattern: "[0-9]{3}-[a-z]{2,4}" },
    });
    assert.match(regex.text, /^[0-9]{3}-[a-z]{2,4}$/);
    const grammar = await generate({
      temperature: 1,
      seed: 3n,
      structured: { kind: "grammar", grammar: 'root ::= "(" item ("," item){0,2} ")"\nitem ::= [a-c]' },
    });
    assert.match(grammar.text, /^\([a-c](,[a-c]){0,2}\)$/);
  });

  it("a continuation replays the tokens already generated and goes on as the whole request would", async () => {
    const structured: StructuredOutput = { kind: "json_schema", schema: SCHEMAS[0]!, strict: true };
    const whole = await generate({ structured });
    assert.ok(whole.ids.length > 4, whole.text);
    const k = 3;
    const rest = await generate({ structured, structuredMatchedTokens: k, maxTokens: 60 - k }, [
      ...prompt,
      ...whole.ids.slice(0, k),
    ]);
    assert.deepEqual(rest.ids, whole.ids.slice(k));
    assert.equal(rest.reason, whole.reason);
  });

  it("refuses a constraint that does not compile, and matched tokens that leave it, with INVALID_ARGUMENT", async () => {
    const refusals: [Partial<SamplingParams>, RegExp][] = [
      [{ structured: { kind: "regex", pattern: "(a" } }, /^structured: regex: missing \)/],
      [
        { structured: { kind: "grammar", grammar: "root ::= nothing" } },
        /^structured: .*Rule "nothing" is not defined/,
      ],
      [
        { structured: { kind: "json_schema", schema: { type: "strin" }, strict: true } },
        /^structured: .*strin/,
      ],
      [
        { structured: { kind: "choice", choices: ["yes"] }, structuredMatchedTokens: 2 },
        /^structured\.matched_tokens: token \d+ of the output so far does not match/,
      ],
    ];
    for (const [sampling, message] of refusals) {
      const err = await generate(sampling).then(
        () => undefined,
        (e: unknown) => e,
      );
      assert.ok(err instanceof TesseraError, String(err));
      assert.equal(err.code, Code.INVALID_ARGUMENT);
      assert.match(err.message, message);
    }
  });
});

describe("Grammars on a real vocabulary", function () {
  this.timeout(60_000);
  it("never allows the model's padding rows, and allows only eos once the grammar is complete", async () => {
    const modelDir = path.join("node_modules", "@lenml", "tokenizer-llama3", "models");
    const vocabSize = 128_256 + 64; // padding rows past the tokenizer's 128,256 ids
    const eos = [128_001, 128_009];
    const grammars = new Grammars({ modelDir, vocabSize, eosTokenIds: eos });
    const constraint = await grammars.open({ kind: "choice", choices: ["yes", "no"] });
    try {
      const first = allowedIds(constraint.mask(), vocabSize);
      assert.ok(first.length > 0 && first.every((id) => id < 128_256), "no padding row is allowed");
      assert.ok(!first.some((id) => eos.includes(id)), "eos is not allowed before the grammar can end");
      assert.equal(constraint.complete, false);
      // "yes" is one token in Llama 3's vocabulary.
      const yes = 9891;
      assert.ok(first.includes(yes));
      assert.ok(constraint.accept(yes));
      assert.deepEqual(allowedIds(constraint.mask(), vocabSize), eos);
      assert.equal(constraint.complete, true);
    } finally {
      constraint.dispose();
    }
  });
});
