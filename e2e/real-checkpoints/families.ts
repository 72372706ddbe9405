// The checkpoints of devtools/reference/expected/checkpoints.json (real tokenizers of Llama 2, Llama 3 and
// Qwen 3 on tiny random models; Llama 2 as a Llama-2-chat checkpoint, its template given with
// --chat-template), made with the same `tessera model create` commands the reference ran, into folders
// named as users name theirs, and what transformers 5.18 generated on them.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { runTessera } from "../../services/cli/child-process.ts";

const root = path.resolve(import.meta.dirname, "../..");

export interface Greedy {
  ids: number[];
  text: string;
}

export interface ChatMessage {
  role: string;
  content: string;
}

export interface ReferenceFamily {
  family: string;
  folder: string;
  /** The template file given with --chat-template, where the tokenizer folder has none. */
  chat_template?: string;
  create_args: string[];
  create_command: string;
  vocab_size: number;
  has_chat_template: boolean;
  texts: { text: string; prompt_ids: number[]; greedy: Greedy }[];
  chats: { messages: ChatMessage[]; prompt: string; prompt_tokens: number; greedy: Greedy }[];
}

export interface Reference {
  transformers: string;
  max_new_tokens: number;
  families: ReferenceFamily[];
}

export const reference = JSON.parse(
  readFileSync(path.join(root, "devtools/reference/expected/checkpoints.json"), "utf8"),
) as Reference;

let scratch: string | undefined;

/**
 * The family's checkpoint made without its --chat-template, in a folder named `folder`: a model with no
 * chat template at all (as the base Llama-2-7b-hf beside Llama-2-7b-chat-hf).
 */
export function withoutChatTemplate(family: ReferenceFamily, folder: string): ReferenceFamily {
  const at = family.create_args.indexOf("--chat-template");
  if (at < 0) throw new Error(`${family.folder} is made without --chat-template`);
  const create_args = family.create_args.filter((_, i) => i !== at && i !== at + 1);
  const { chat_template: _, ...rest } = family;
  return {
    ...rest,
    folder,
    create_args,
    create_command: `node services/cli/main.ts ${create_args.join(" ")}`,
    has_chat_template: false,
    chats: [],
  };
}

/** Makes the family's checkpoint in a temp folder named as the reference's (removed at exit). */
export async function makeCheckpoint(family: ReferenceFamily): Promise<string> {
  if (scratch === undefined) {
    const dir = mkdtempSync(path.join(os.tmpdir(), "tessera-real-"));
    process.once("exit", () => rmSync(dir, { recursive: true, force: true }));
    scratch = dir;
  }
  const out = path.join(scratch, family.folder);
  const made = await runTessera(family.create_args.map((a) => (a === "$OUT" ? out : a)));
  if (made.code !== 0) throw new Error(`${family.create_command} failed (${made.code}): ${made.stderr}`);
  return out;
}
