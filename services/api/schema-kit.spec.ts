import assert from "node:assert/strict";
import { z } from "zod";
import { doc, freeForm, immutable, quantity, structuralSchema } from "./schema-kit.ts";

describe("schema kit", () => {
  it("carries descriptions, CEL rules and list types into the structural schema", () => {
    const schema = z.object({
      replicas: doc(z.int().min(0).default(1), "How many.", { rules: [immutable("replicas")] }),
      items: doc(z.array(z.object({ type: z.string() })).optional(), "Items.", {
        listType: "map",
        listMapKeys: ["type"],
      }),
    });
    assert.deepEqual(structuralSchema(schema), {
      type: "object",
      properties: {
        replicas: {
          type: "integer",
          minimum: 0,
          default: 1,
          description: "How many.",
          "x-kubernetes-validations": [{ rule: "self == oldSelf", message: "replicas is immutable" }],
        },
        items: {
          type: "array",
          description: "Items.",
          items: { type: "object", properties: { type: { type: "string" } }, required: ["type"] },
          "x-kubernetes-list-type": "map",
          "x-kubernetes-list-map-keys": ["type"],
        },
      },
    });
  });

  it("writes quantities as int-or-string and free-form objects as preserved", () => {
    const schema = structuralSchema(
      z.object({ cpu: doc(quantity(), "CPU."), affinity: doc(freeForm().optional(), "Affinity.") }),
    );
    const properties = schema["properties"] as Record<string, Record<string, unknown>>;
    assert.equal(properties["cpu"]?.["x-kubernetes-int-or-string"], true);
    assert.equal(properties["cpu"]?.["description"], "CPU.");
    assert.deepEqual(properties["affinity"], {
      type: "object",
      description: "Affinity.",
      "x-kubernetes-preserve-unknown-fields": true,
    });
  });

  it("parses quantities as the API server does", () => {
    const q = quantity();
    for (const ok of [2, "500m", "4Gi", "1.5", "1e3"])
      assert.equal(q.safeParse(ok).success, true, String(ok));
    for (const bad of ["4 Gi", "lots", -1, 1.5]) assert.equal(q.safeParse(bad).success, false, String(bad));
  });
});
