// `tessera model create --tokenizer DIR [--chat-template FILE]`: a checkpoint carrying a real tokenizer
// instead of the one the factory trains. DIR holds tokenizer.json and tokenizer_config.json (and maybe
// chat_template.jinja or chat_template.json), as a model downloaded from the Hub does; the checkpoint gets
// the files transformers 5.18 writes for them (`AutoTokenizer.from_pretrained(DIR).save_pretrained(out)`,
// after `tokenizer.chat_template = open(FILE).read()` when FILE is given, as for a chat model whose
// tokenizer folder lacks its template), and its config follows the tokenizer: the vocab size and the
// bos/eos/pad token ids.
import { readFile } from "node:fs/promises";
import path from "node:path";
import { Code, TesseraError } from "../../services/kernel/errors.ts";
import { toPythonJson } from "./python-json.ts";
import { savedTokenizerConfig } from "./saved-tokenizer-config.ts";
import { savedTokenizerJson, tokenizerRebuild } from "./saved-tokenizer-json.ts";

/** Token ids a checkpoint's config.json and generation_config.json carry; null where the tokenizer has none. */
export interface SpecialTokenIds {
  readonly bos: number | null;
  readonly eos: number | null;
  readonly pad: number | null;
}

export interface SourceTokenizer {
  /** File name -> text, as 5.18 writes them. */
  readonly files: Readonly<Record<string, string>>;
  /** One more than the largest token id (vocab and added tokens). */
  readonly vocabSize: number;
  readonly ids: SpecialTokenIds;
}

async function readText(dir: string, name: string): Promise<string | undefined> {
  try {
    return await readFile(path.join(dir, name), "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw new TesseraError(Code.FAILED_PRECONDITION, `tokenizer: cannot read ${path.join(dir, name)}`, {
      cause: err,
    });
  }
}

async function readJson(dir: string, name: string): Promise<Record<string, unknown>> {
  const text = await readText(dir, name);
  if (text === undefined) throw TesseraError.invalidArgument("tokenizer", `${dir} has no ${name}`);
  try {
    const value: unknown = JSON.parse(text);
    if (typeof value === "object" && value !== null && !Array.isArray(value))
      return value as Record<string, unknown>;
  } catch {}
  throw TesseraError.invalidArgument("tokenizer", `${path.join(dir, name)} is not a JSON object`);
}

function templateOfJson(dir: string, text: string): unknown {
  try {
    return (JSON.parse(text) as Record<string, unknown> | null)?.["chat_template"];
  } catch {
    throw TesseraError.invalidArgument("tokenizer", `${path.join(dir, "chat_template.json")} is not JSON`);
  }
}

/** A template file's text as Python's text mode reads it (open(f).read(): \r\n and \r become \n). */
function pythonText(text: string): string {
  return text.replace(/\r\n?/g, "\n");
}

async function chatTemplateFile(file: string): Promise<string> {
  try {
    return pythonText(await readFile(file, "utf8"));
  } catch (err) {
    const reason = (err as NodeJS.ErrnoException).code === "ENOENT" ? "no such file" : String(err);
    throw TesseraError.invalidArgument("chatTemplate", `cannot read ${file}: ${reason}`);
  }
}

/** The chat template where the router looks for it: chat_template.jinja, the config, chat_template.json. */
async function chatTemplate(dir: string, config: Record<string, unknown>): Promise<string | undefined> {
  const jinja = await readText(dir, "chat_template.jinja");
  if (jinja !== undefined) return pythonText(jinja);
  const json = config["chat_template"] === undefined ? await readText(dir, "chat_template.json") : undefined;
  const template = json === undefined ? config["chat_template"] : templateOfJson(dir, json);
  if (template === undefined || template === null) return undefined;
  if (typeof template !== "string") {
    throw TesseraError.invalidArgument(
      "tokenizer",
      "named chat templates (a list of {name, template}) are not supported; give one template",
    );
  }
  return template;
}

function tokenIds(tokenizer: Record<string, unknown>): Map<string, number> {
  const ids = new Map<string, number>();
  const model = tokenizer["model"] as { vocab?: Record<string, number> } | undefined;
  for (const [token, id] of Object.entries(model?.vocab ?? {})) ids.set(token, id);
  for (const added of (tokenizer["added_tokens"] ?? []) as { id: number; content: string }[])
    ids.set(added.content, added.id);
  return ids;
}

function specialId(ids: Map<string, number>, config: Record<string, unknown>, key: string): number | null {
  const raw = config[key];
  const token = typeof raw === "object" && raw !== null && "content" in raw ? raw.content : raw;
  if (token === undefined || token === null) return null;
  const id = typeof token === "string" ? ids.get(token) : undefined;
  if (id === undefined)
    throw TesseraError.invalidArgument(
      "tokenizer",
      `tokenizer_config.json ${key} ${JSON.stringify(token)} is not a token`,
    );
  return id;
}

function largest(values: Iterable<number>): number {
  let max = -1;
  for (const v of values) if (v > max) max = v;
  return max;
}

/**
 * Reads the tokenizer folder `dir` and returns the files a checkpoint carries for it; the template in
 * `chatTemplatePath`, when given, replaces any the folder has.
 */
export async function readTokenizerFolder(dir: string, chatTemplatePath?: string): Promise<SourceTokenizer> {
  const config = await readJson(dir, "tokenizer_config.json");
  const rebuild = tokenizerRebuild(config["tokenizer_class"]);
  const tokenizer = await readJson(dir, "tokenizer.json");
  const saved = savedTokenizerJson(tokenizer, config);
  const files: Record<string, string> = {
    "tokenizer.json": toPythonJson(saved),
    "tokenizer_config.json": `${toPythonJson(savedTokenizerConfig(config, rebuild), { sortKeys: true })}\n`,
  };
  const template =
    chatTemplatePath === undefined
      ? await chatTemplate(dir, config)
      : await chatTemplateFile(chatTemplatePath);
  if (template !== undefined) files["chat_template.jinja"] = template;
  const ids = tokenIds(tokenizer);
  return {
    files,
    vocabSize: largest(ids.values()) + 1,
    ids: {
      bos: specialId(ids, config, "bos_token"),
      eos: specialId(ids, config, "eos_token"),
      pad: specialId(ids, config, "pad_token"),
    },
  };
}
