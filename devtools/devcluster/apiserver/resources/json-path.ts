// The JSONPath subset printer columns and scale subresources use: `.a.b`, `.a[0]`, `.a[*].b`
// and filters `.a[?(@.type=="Ready")].status`. Returns every match.
import type { JsonValue } from "../../../../services/kube/kube-object.ts";
import { isJsonObject } from "../core/json-object.ts";

type Step =
  | { field: string }
  | { index: number }
  | { all: true }
  | { filter: { path: string[]; value: string } };

function parse(path: string): Step[] {
  const steps: Step[] = [];
  const re =
    /\.([A-Za-z0-9_\-$]+)|\[(\d+)\]|\[\*\]|\[\?\(@\.([A-Za-z0-9_.-]+)\s*==\s*["']([^"']*)["']\)\]|\['([^']+)'\]/g;
  const text = path.replace(/^\{|\}$/g, "").replace(/^\$/, "");
  for (let m = re.exec(text); m; m = re.exec(text)) {
    if (m[1] !== undefined) steps.push({ field: m[1] });
    else if (m[2] !== undefined) steps.push({ index: Number(m[2]) });
    else if (m[3] !== undefined) steps.push({ filter: { path: m[3].split("."), value: m[4] ?? "" } });
    else if (m[5] !== undefined) steps.push({ field: m[5] });
    else steps.push({ all: true });
  }
  return steps;
}

function fieldOf(value: JsonValue, path: string[]): JsonValue | undefined {
  let node: JsonValue | undefined = value;
  for (const key of path) node = isJsonObject(node) ? node[key] : undefined;
  return node;
}

export function evaluateJsonPath(root: JsonValue, path: string): JsonValue[] {
  let nodes: JsonValue[] = [root];
  for (const step of parse(path)) {
    const next: JsonValue[] = [];
    for (const node of nodes) {
      if ("field" in step) {
        const value = isJsonObject(node) ? node[step.field] : undefined;
        if (value !== undefined) next.push(value);
      } else if ("index" in step) {
        if (Array.isArray(node) && node[step.index] !== undefined) next.push(node[step.index]!);
      } else if ("all" in step) {
        if (Array.isArray(node)) next.push(...node);
        else if (isJsonObject(node))
          next.push(...(Object.values(node).filter((v) => v !== undefined) as JsonValue[]));
      } else if (Array.isArray(node)) {
        next.push(
          ...node.filter((item) => String(fieldOf(item, step.filter.path) ?? "") === step.filter.value),
        );
      }
    }
    nodes = next;
  }
  return nodes;
}

/** The first match, or undefined. */
export function jsonPathValue(root: JsonValue, path: string): JsonValue | undefined {
  return evaluateJsonPath(root, path)[0];
}
