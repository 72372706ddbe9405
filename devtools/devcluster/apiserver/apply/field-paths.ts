// Field ownership paths, in the FieldsV1 vocabulary managedFields uses: `f:<field>` for an object
// field, `k:{"name":"c"}` for an element of a list keyed by fields, `v:<json>` for a set member,
// and `.` for "the element itself". A path is a list of such steps; a set of paths is what one
// manager owns.
import type { JsonObject, JsonValue } from "../../../../services/kube/kube-object.ts";
import { isJsonObject, jsonEqual } from "../core/json-object.ts";
import { fieldInfo, type ListType, type TypeInfo } from "../resources/type-info.ts";

export type FieldPath = string[];

const SEP = "\u0000";
export const pathKey = (path: FieldPath) => path.join(SEP);
export const keyPath = (key: string): FieldPath => (key === "" ? [] : key.split(SEP));

/** Fields the server owns; never tracked per manager. */
const IGNORED = new Set(
  [
    "f:apiVersion",
    "f:kind",
    "f:metadata/f:name",
    "f:metadata/f:namespace",
    "f:metadata/f:uid",
    "f:metadata/f:resourceVersion",
    "f:metadata/f:generation",
    "f:metadata/f:creationTimestamp",
    "f:metadata/f:deletionTimestamp",
    "f:metadata/f:deletionGracePeriodSeconds",
    "f:metadata/f:managedFields",
    "f:metadata/f:selfLink",
  ].map((p) => p.replaceAll("/", SEP)),
);

/** The `k:` step of a list-map element: its key fields (defaulted when absent), in key order. */
export function elementKey(item: JsonValue, list: ListType | undefined): string {
  const id: JsonObject = {};
  if (list?.type !== "map") return "k:{}";
  for (const key of list.keys) {
    const value = isJsonObject(item) ? (item[key] ?? list.keyDefaults?.[key]) : undefined;
    if (value !== undefined) id[key] = value;
  }
  return `k:${JSON.stringify(id)}`;
}

/** Every owned path of a value, leaves and list elements (`.`), excluding server-owned fields. */
export function fieldPaths(value: JsonValue, info: TypeInfo | undefined): Set<string> {
  const paths = new Set<string>();
  collect(value, info, [], paths);
  for (const ignored of IGNORED) paths.delete(ignored);
  paths.delete("f:metadata");
  return paths;
}

function collect(value: JsonValue, info: TypeInfo | undefined, prefix: FieldPath, out: Set<string>): void {
  if (isJsonObject(value) && !info?.atomic) {
    const entries = Object.entries(value).filter(([, v]) => v !== undefined) as [string, JsonValue][];
    if (entries.length === 0 && prefix.length > 0) out.add(pathKey(prefix));
    for (const [key, child] of entries) collect(child, fieldInfo(info, key), [...prefix, `f:${key}`], out);
    return;
  }
  if (Array.isArray(value) && info?.list?.type === "map") {
    for (const item of value) {
      const element = [...prefix, elementKey(item, info.list)];
      out.add(pathKey([...element, "."]));
      if (isJsonObject(item)) collect(item, info.elements, element, out);
    }
    if (value.length === 0) out.add(pathKey(prefix));
    return;
  }
  if (Array.isArray(value) && info?.list?.type === "set") {
    for (const item of value) out.add(pathKey([...prefix, `v:${JSON.stringify(item)}`]));
    if (value.length === 0) out.add(pathKey(prefix));
    return;
  }
  out.add(pathKey(prefix));
}

/** Looks a path up in a value; `found: false` when some step is missing. */
export function valueAt(
  root: JsonValue,
  path: FieldPath,
  info: TypeInfo | undefined,
): { found: boolean; value?: JsonValue } {
  let node: JsonValue = root;
  let nodeInfo = info;
  for (const step of path) {
    if (step === ".") return { found: true, value: node };
    if (step.startsWith("f:")) {
      const key = step.slice(2);
      if (!isJsonObject(node) || node[key] === undefined) return { found: false };
      node = node[key]!;
      nodeInfo = fieldInfo(nodeInfo, key);
    } else if (step.startsWith("k:") && Array.isArray(node)) {
      const list = nodeInfo?.list;
      const match = node.find((item) => elementKey(item, list) === step);
      if (match === undefined) return { found: false };
      node = match;
      nodeInfo = nodeInfo?.elements;
    } else if (step.startsWith("v:") && Array.isArray(node)) {
      const wanted = JSON.parse(step.slice(2)) as JsonValue;
      return node.some((item) => jsonEqual(item, wanted)) ? { found: true, value: wanted } : { found: false };
    } else return { found: false };
  }
  return { found: true, value: node };
}

/** Human path for conflict messages: .spec.containers[name="web"].image */
export function formatPath(path: FieldPath): string {
  return path
    .map((step) => {
      if (step.startsWith("f:")) return `.${step.slice(2)}`;
      if (step.startsWith("k:")) {
        const id = JSON.parse(step.slice(2)) as JsonObject;
        return `[${Object.entries(id)
          .map(([k, v]) => `${k}=${JSON.stringify(v)}`)
          .join(",")}]`;
      }
      if (step.startsWith("v:")) return `[=${step.slice(2)}]`;
      return "";
    })
    .join("");
}

/** Converts a path set to the FieldsV1 tree stored in managedFields. */
export function toFieldsV1(paths: Iterable<string>): JsonObject {
  const root: JsonObject = {};
  for (const key of paths) {
    let node = root;
    for (const step of keyPath(key)) {
      const next = node[step];
      if (isJsonObject(next)) node = next;
      else {
        const created: JsonObject = {};
        node[step] = created;
        node = created;
      }
    }
  }
  return root;
}

/** Reads a FieldsV1 tree back into a path set (leaves only). */
export function fromFieldsV1(tree: JsonObject): Set<string> {
  const paths = new Set<string>();
  const walk = (node: JsonObject, prefix: FieldPath) => {
    const entries = Object.entries(node);
    if (entries.length === 0 && prefix.length > 0) paths.add(pathKey(prefix));
    for (const [step, child] of entries) {
      if (isJsonObject(child)) walk(child, [...prefix, step]);
    }
  };
  walk(tree, []);
  return paths;
}
