import assert from "node:assert/strict";
import { create } from "@bufbuild/protobuf";
import { SamplingParamsSchema, StructuredOutputSchema } from "../../proto/gen/tessera/v1/inference_pb.js";
import { parseSamplingParams } from "./sampling-params.ts";
import { structuredFromMessage, structuredToMessage } from "./structured-output.ts";
import type { StructuredOutput } from "./types.ts";

describe("structured output on the wire", () => {
  it("round-trips every kind through tessera.v1.StructuredOutput, with the matched tokens", () => {
    const kinds: StructuredOutput[] = [
      { kind: "json_object" },
      {
        kind: "json_schema",
        schema: { type: "object", properties: { a: { enum: [1, "b"] } } },
        strict: true,
      },
      { kind: "regex", pattern: "[a-z]+" },
      { kind: "choice", choices: ["yes", "no"] },
      { kind: "grammar", grammar: 'root ::= "x"' },
    ];
    for (const [i, s] of kinds.entries()) {
      const back = structuredFromMessage(structuredToMessage(s, i));
      assert.deepEqual(back.value, { structured: s, matchedTokens: i });
    }
    assert.deepEqual(structuredFromMessage(undefined), { value: undefined });
  });

  it("refuses a message without a kind, a schema that is not JSON or not an object, and empty choices", () => {
    const cases: [Parameters<typeof create<typeof StructuredOutputSchema>>[1], RegExp][] = [
      [{}, /^structured: set json_object/],
      [
        { kind: { case: "jsonSchema", value: { schemaJson: "{nope" } } },
        /^structured\.json_schema\.schema_json: is not JSON/,
      ],
      [
        { kind: { case: "jsonSchema", value: { schemaJson: "3" } } },
        /^structured: the schema must be a JSON object/,
      ],
      [{ kind: { case: "choice", value: { choices: [] } } }, /^structured: needs at least one choice/],
      [{ kind: { case: "regex", value: "" } }, /^structured: the regex must not be empty/],
    ];
    for (const [init, message] of cases)
      assert.match(structuredFromMessage(create(StructuredOutputSchema, init)).error?.message ?? "", message);
  });

  it("is part of the validated sampling parameters; matched tokens need a constraint", () => {
    const limits = { vocabSize: 100 };
    const structured: StructuredOutput = { kind: "choice", choices: ["a"] };
    assert.deepEqual(parseSamplingParams({ structured }, limits).value?.structured, structured);
    assert.match(
      parseSamplingParams({ structuredMatchedTokens: 2 }, limits).error?.message ?? "",
      /^structured\.matched_tokens: needs a constraint/,
    );
    // The proto field is number 15 of SamplingParams (what other clients encode).
    assert.equal(SamplingParamsSchema.fields.find((f) => f.localName === "structured")?.number, 15);
  });
});
