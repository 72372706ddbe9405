// JSON schemas for the structured-output e2e: objects with required properties, enums, arrays, numbers,
// nested objects. Strings carry a pattern so that a random-weights model's strings end (a free string
// runs to max_tokens: ending it is one token among ~500). Numeric bounds are ones xgrammar 0.1.27
// enforces exactly: it lets an integer bounded by 120 reach 129 and a number bounded by 100 reach 100.5
// (docs/DESIGN.md, structured outputs), so bounded reals are enums here. Every object says
// additionalProperties false: with strict false (every other request) a schema that allows extra
// properties lets the model add one, and a random model's free property name never ends.
export const STRUCTURED_SCHEMAS: Record<string, unknown>[] = [
  {
    type: "object",
    properties: {
      name: { type: "string", pattern: "^[a-z]{1,8}$" },
      age: { type: "integer", minimum: 0, maximum: 99 },
      active: { type: "boolean" },
    },
    required: ["name", "age", "active"],
    additionalProperties: false,
  },
  {
    type: "object",
    properties: {
      color: { enum: ["red", "green", "blue"] },
      tags: { type: "array", items: { enum: ["a", "b", "c"] }, minItems: 1, maxItems: 3 },
    },
    required: ["color", "tags"],
    additionalProperties: false,
  },
  {
    type: "object",
    properties: {
      price: { type: "number", enum: [0.5, 1.25, 10, 99.99] },
      score: { type: "integer", minimum: -100, maximum: 100 },
      qty: { type: "integer", minimum: 1, maximum: 9 },
    },
    required: ["price", "qty", "score"],
    additionalProperties: false,
  },
  {
    type: "object",
    properties: {
      point: {
        type: "object",
        properties: {
          x: { type: "integer", minimum: -9, maximum: 9 },
          y: { type: "integer", minimum: -9, maximum: 9 },
        },
        required: ["x", "y"],
        additionalProperties: false,
      },
      label: { const: "p" },
    },
    required: ["point", "label"],
    additionalProperties: false,
  },
  {
    type: "object",
    properties: {
      items: {
        type: "array",
        items: {
          type: "object",
          properties: { id: { type: "integer", minimum: 0, maximum: 99 }, ok: { type: "boolean" } },
          required: ["id", "ok"],
          additionalProperties: false,
        },
        maxItems: 2,
      },
      kind: { enum: ["x", "y"] },
    },
    required: ["items", "kind"],
    additionalProperties: false,
  },
];
