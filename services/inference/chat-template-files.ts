// Where a checkpoint folder keeps its chat templates, in transformers 5.18's order
// (`PreTrainedTokenizerBase._from_pretrained`, then `ProcessorMixin` for the legacy processor file):
//   1. chat_template.jinja (the default template; what `save_pretrained` writes since 4.50) and
//      additional_chat_templates/<name>.jinja (named ones). Any of these replace the config's.
//   2. tokenizer_config.json `chat_template`: a string, or a list of {name, template} (older saves).
//   3. chat_template.json `{"chat_template": "..."}`, the processor's legacy file (multimodal models
//      saved before 4.50), when the tokenizer files carry none.
// The template sees the tokenizer's named special tokens (`special_tokens_map` in transformers: bos,
// eos, unk, sep, pad, cls, mask and the names in extra_special_tokens), read from tokenizer_config.json,
// with the legacy special_tokens_map.json filling what it lacks.
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { Code, TesseraError } from "../kernel/errors.ts";

export interface ChatTemplateFiles {
  /** Template name ("default" for the main one) -> Jinja source. */
  templates: Record<string, string>;
  specialTokens: Record<string, string>;
  /** The file (or files) the templates came from, for messages. */
  origin: string;
}

const SPECIAL_TOKENS = [
  "bos_token",
  "eos_token",
  "unk_token",
  "sep_token",
  "pad_token",
  "cls_token",
  "mask_token",
];

/** The templates of the checkpoint folder `dir`; undefined when it has none. Throws on a malformed file. */
export function readChatTemplates(dir: string): ChatTemplateFiles | undefined {
  const config = readJsonObject(dir, "tokenizer_config.json") ?? {};
  const found = jinjaFiles(dir) ?? configTemplates(dir, config) ?? processorTemplate(dir);
  if (found === undefined) return undefined;
  const legacy = readJsonObject(dir, "special_tokens_map.json") ?? {};
  return { ...found, specialTokens: { ...specialTokens(legacy), ...specialTokens(config) } };
}

type Found = Omit<ChatTemplateFiles, "specialTokens">;

function jinjaFiles(dir: string): Found | undefined {
  const templates: Record<string, string> = {};
  const origins: string[] = [];
  const main = readText(dir, "chat_template.jinja");
  if (main !== undefined) {
    templates["default"] = main;
    origins.push("chat_template.jinja");
  }
  const extraDir = path.join(dir, "additional_chat_templates");
  for (const name of listDir(extraDir)
    .filter((f) => f.endsWith(".jinja"))
    .sort()) {
    templates[name.slice(0, -".jinja".length)] = readText(extraDir, name) as string;
    origins.push(`additional_chat_templates/${name}`);
  }
  return origins.length === 0 ? undefined : { templates, origin: origins.join(", ") };
}

function configTemplates(dir: string, config: Record<string, unknown>): Found | undefined {
  const value = config["chat_template"];
  const origin = "tokenizer_config.json chat_template";
  if (value === undefined || value === null) return undefined;
  if (typeof value === "string") return { templates: { default: value }, origin };
  const templates: Record<string, string> = {};
  const valid =
    Array.isArray(value) &&
    value.every((entry: { name?: unknown; template?: unknown } | null) => {
      if (typeof entry?.name !== "string" || typeof entry.template !== "string") return false;
      templates[entry.name] = entry.template;
      return true;
    });
  if (!valid) throw malformed(dir, origin, "must be a string or a list of {name, template}");
  return { templates, origin };
}

function processorTemplate(dir: string): Found | undefined {
  const json = readJsonObject(dir, "chat_template.json");
  if (json === undefined) return undefined;
  const value = json["chat_template"];
  if (typeof value !== "string")
    throw malformed(dir, "chat_template.json", 'must be {"chat_template": "..."}');
  return { templates: { default: value }, origin: "chat_template.json" };
}

function specialTokens(config: Record<string, unknown>): Record<string, string> {
  const extra = config["extra_special_tokens"];
  const names = [
    ...SPECIAL_TOKENS,
    ...(typeof extra === "object" && extra !== null && !Array.isArray(extra) ? Object.keys(extra) : []),
  ];
  const tokens: Record<string, string> = {};
  for (const name of names) {
    const token = config[name] ?? (extra as Record<string, unknown> | undefined)?.[name];
    const content =
      typeof token === "object" && token !== null ? (token as { content?: unknown }).content : token;
    if (typeof content === "string") tokens[name] = content;
  }
  return tokens;
}

function readText(dir: string, name: string): string | undefined {
  try {
    return readFileSync(path.join(dir, name), "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw new TesseraError(Code.FAILED_PRECONDITION, `cannot read ${path.join(dir, name)}`, { cause: err });
  }
}

function readJsonObject(dir: string, name: string): Record<string, unknown> | undefined {
  const text = readText(dir, name);
  if (text === undefined) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {}
  if (typeof value === "object" && value !== null && !Array.isArray(value))
    return value as Record<string, unknown>;
  throw malformed(dir, name, "is not a JSON object");
}

function listDir(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

function malformed(dir: string, what: string, message: string): TesseraError {
  return new TesseraError(Code.FAILED_PRECONDITION, `${path.join(dir, what)} ${message}`);
}
