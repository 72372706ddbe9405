// Label selectors: the query-string form (`app=web,tier!=db,env in (a,b),!legacy`) and the
// structured form of workload specs (matchLabels + matchExpressions), compiled to one matcher.
import { type Result, TesseraError } from "../../../../services/kernel/errors.ts";

export type LabelOperator = "=" | "!=" | "in" | "notin" | "exists" | "!exists";

export interface LabelRequirement {
  key: string;
  operator: LabelOperator;
  values: string[];
}

export type LabelSelector = readonly LabelRequirement[];

export interface StructuredLabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: { key: string; operator: string; values?: string[] }[];
}

export function matchesLabels(selector: LabelSelector, labels: Record<string, string> | undefined): boolean {
  return selector.every((req) => matchesRequirement(req, labels ?? {}));
}

function matchesRequirement(req: LabelRequirement, labels: Record<string, string>): boolean {
  const has = Object.hasOwn(labels, req.key);
  const value = labels[req.key];
  switch (req.operator) {
    case "=":
    case "in":
      return has && req.values.includes(value ?? "");
    case "!=":
    case "notin":
      return !has || !req.values.includes(value ?? "");
    case "exists":
      return has;
    case "!exists":
      return !has;
    default: {
      const never: never = req.operator;
      return never;
    }
  }
}

const KEY = /^([a-z0-9A-Z]([-a-z0-9A-Z_.]*[a-z0-9A-Z])?\/)?[a-z0-9A-Z]([-a-z0-9A-Z_.]*[a-z0-9A-Z])?$/;

/** Splits on commas that are not inside a parenthesised value set. */
function splitTerms(text: string): string[] {
  const terms: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === "(") depth++;
    else if (c === ")") depth--;
    else if (c === "," && depth === 0) {
      terms.push(text.slice(start, i));
      start = i + 1;
    }
  }
  terms.push(text.slice(start));
  return terms.map((t) => t.trim()).filter((t) => t !== "");
}

function parseTerm(term: string): Result<LabelRequirement> {
  const set = /^(\S+)\s+(in|notin)\s*\(([^)]*)\)$/.exec(term);
  if (set) {
    const values = set[3]!.split(",").map((v) => v.trim());
    return checkKey({ key: set[1]!, operator: set[2] as "in" | "notin", values });
  }
  const cmp = /^([^=!\s]+)\s*(==|=|!=)\s*(\S*)$/.exec(term);
  if (cmp) return checkKey({ key: cmp[1]!, operator: cmp[2] === "!=" ? "!=" : "=", values: [cmp[3]!] });
  if (term.startsWith("!")) return checkKey({ key: term.slice(1).trim(), operator: "!exists", values: [] });
  return checkKey({ key: term, operator: "exists", values: [] });
}

function checkKey(req: LabelRequirement): Result<LabelRequirement> {
  if (!KEY.test(req.key))
    return { error: TesseraError.invalidArgument("labelSelector", `invalid label key "${req.key}"`) };
  return { value: req };
}

export function parseLabelSelector(text: string | undefined): Result<LabelSelector> {
  const requirements: LabelRequirement[] = [];
  for (const term of splitTerms(text ?? "")) {
    const parsed = parseTerm(term);
    if (parsed.error) return parsed;
    requirements.push(parsed.value);
  }
  return { value: requirements };
}

const OPERATORS: Record<string, LabelOperator> = {
  In: "in",
  NotIn: "notin",
  Exists: "exists",
  DoesNotExist: "!exists",
};

/** The structured selector of Deployments, Services and the like. */
export function fromStructuredSelector(selector: StructuredLabelSelector): Result<LabelSelector> {
  const requirements: LabelRequirement[] = Object.entries(selector.matchLabels ?? {}).map(([key, value]) => ({
    key,
    operator: "=",
    values: [value],
  }));
  for (const expr of selector.matchExpressions ?? []) {
    const operator = OPERATORS[expr.operator];
    if (!operator) {
      return {
        error: TesseraError.invalidArgument("matchExpressions", `"${expr.operator}" is not a valid operator`),
      };
    }
    requirements.push({ key: expr.key, operator, values: expr.values ?? [] });
  }
  return { value: requirements };
}

export function formatLabelSelector(selector: LabelSelector): string {
  return selector
    .map((r) => {
      if (r.operator === "exists") return r.key;
      if (r.operator === "!exists") return `!${r.key}`;
      if (r.operator === "in" || r.operator === "notin")
        return `${r.key} ${r.operator} (${r.values.join(",")})`;
      return `${r.key}${r.operator}${r.values[0] ?? ""}`;
    })
    .join(",");
}
