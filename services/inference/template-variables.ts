// The names a Jinja template reads, from @huggingface/jinja's syntax tree: every Identifier node, which
// takes in variables, loop names, and attribute names after a dot (`message.content`). A request's
// chat_template_kwargs are checked against it so that a key the template never reads (a typo, or
// Qwen 3's `enable_thinking` sent to a Llama) is refused rather than silently ignored; counting too many
// names only ever lets a key through, never refuses one the template reads.
import type { Template } from "@huggingface/jinja";

export function templateVariables(program: Template["parsed"]): ReadonlySet<string> {
  const names = new Set<string>();
  const seen = new Set<object>();
  const visit = (node: unknown): void => {
    if (typeof node !== "object" || node === null || seen.has(node)) return;
    seen.add(node);
    if (node instanceof Map) {
      for (const [key, value] of node) {
        visit(key);
        visit(value);
      }
      return;
    }
    const record = node as { type?: unknown; value?: unknown };
    if (record.type === "Identifier" && typeof record.value === "string") names.add(record.value);
    for (const child of Object.values(node)) visit(child);
  };
  visit(program);
  return names;
}
