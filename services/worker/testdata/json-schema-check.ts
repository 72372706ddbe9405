// A small JSON Schema check for the structured-output tests (the subset their schemas use: type, enum,
// const, properties, required, additionalProperties false, items, minItems/maxItems, minLength/maxLength,
// pattern,
// minimum/maximum). Returns the first problem, or undefined when the value is valid.
interface Schema {
  type?: string;
  enum?: unknown[];
  const?: unknown;
  properties?: Record<string, Schema>;
  required?: string[];
  additionalProperties?: unknown;
  items?: Schema;
  minItems?: number;
  maxItems?: number;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  minimum?: number;
  maximum?: number;
}

export function schemaProblem(loose: Record<string, unknown>, value: unknown, at = "$"): string | undefined {
  const schema = loose as Schema;
  if (schema.enum && !schema.enum.some((e) => JSON.stringify(e) === JSON.stringify(value)))
    return `${at}: ${JSON.stringify(value)} is not in the enum`;
  if ("const" in schema && JSON.stringify(schema.const) !== JSON.stringify(value))
    return `${at}: not the const`;
  const type = schema.type;
  if (type !== undefined && !hasType(type, value)) return `${at}: ${JSON.stringify(value)} is not ${type}`;
  if (typeof value === "number") {
    if (typeof schema.minimum === "number" && value < schema.minimum) return `${at}: below the minimum`;
    if (typeof schema.maximum === "number" && value > schema.maximum) return `${at}: above the maximum`;
  }
  if (typeof value === "string") {
    const length = [...value].length;
    if (typeof schema.minLength === "number" && length < schema.minLength) return `${at}: too short`;
    if (typeof schema.maxLength === "number" && length > schema.maxLength) return `${at}: too long`;
    if (typeof schema.pattern === "string" && !new RegExp(schema.pattern, "u").test(value))
      return `${at}: does not match ${schema.pattern}`;
  }
  if (Array.isArray(value)) {
    if (typeof schema.minItems === "number" && value.length < schema.minItems) return `${at}: too few items`;
    if (typeof schema.maxItems === "number" && value.length > schema.maxItems) return `${at}: too many items`;
    for (const [i, item] of value.entries()) {
      const problem =
        schema.items && schemaProblem(schema.items as Record<string, unknown>, item, `${at}[${i}]`);
      if (problem) return problem;
    }
  }
  if (typeof value === "object" && value !== null && !Array.isArray(value)) {
    const properties = schema.properties ?? {};
    for (const name of schema.required ?? []) if (!(name in value)) return `${at}: misses required ${name}`;
    for (const [name, v] of Object.entries(value)) {
      const sub = properties[name];
      if (sub === undefined) {
        if (schema.additionalProperties === false) return `${at}: unexpected property ${name}`;
        continue;
      }
      const problem = schemaProblem(sub as Record<string, unknown>, v, `${at}.${name}`);
      if (problem) return problem;
    }
  }
  return undefined;
}

function hasType(type: string, value: unknown): boolean {
  switch (type) {
    case "object":
      return typeof value === "object" && value !== null && !Array.isArray(value);
    case "array":
      return Array.isArray(value);
    case "string":
      return typeof value === "string";
    case "integer":
      return Number.isInteger(value);
    case "number":
      return typeof value === "number";
    case "boolean":
      return typeof value === "boolean";
    case "null":
      return value === null;
    default:
      return false;
  }
}
