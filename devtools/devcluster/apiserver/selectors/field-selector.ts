// Field selectors (`metadata.name=web,spec.nodeName!=`): equality on any dotted field path.
// Real Kubernetes allows a fixed set of fields per kind; here every scalar field is selectable,
// which is a superset that serves kubectl (metadata.name), the kubelet (spec.nodeName) and
// event queries (involvedObject.uid).
import { type Result, TesseraError } from "../../../../services/kernel/errors.ts";
import { getPath } from "../core/json-object.ts";

export interface FieldRequirement {
  path: string[];
  negate: boolean;
  value: string;
}

export type FieldSelector = readonly FieldRequirement[];

export function parseFieldSelector(text: string | undefined): Result<FieldSelector> {
  const requirements: FieldRequirement[] = [];
  for (const term of (text ?? "").split(",").map((t) => t.trim())) {
    if (term === "") continue;
    const match = /^([A-Za-z0-9_.]+)\s*(==|=|!=)\s*(.*)$/.exec(term);
    if (!match)
      return { error: TesseraError.invalidArgument("fieldSelector", `invalid selector: "${term}"`) };
    requirements.push({ path: match[1]!.split("."), negate: match[2] === "!=", value: match[3]! });
  }
  return { value: requirements };
}

function fieldText(value: unknown): string {
  if (value === undefined || value === null) return "";
  if (typeof value === "string") return value;
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  return JSON.stringify(value);
}

export function matchesFields(selector: FieldSelector, object: unknown): boolean {
  return selector.every((req) => {
    const path =
      req.path[0] === "metadata" && req.path[1] === "namespace" ? ["metadata", "namespace"] : req.path;
    const equal = fieldText(getPath(object, path)) === req.value;
    return req.negate ? !equal : equal;
  });
}

/** The name a selector pins down with `metadata.name=`, if any (lets watches skip other objects fast). */
export function selectedName(selector: FieldSelector): string | undefined {
  const req = selector.find((r) => !r.negate && r.path.join(".") === "metadata.name");
  return req?.value;
}
