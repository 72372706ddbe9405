import assert from "node:assert/strict";
import { InvalidArgumentError } from "commander";
import { TesseraError } from "../kernel/errors.ts";
import { asFlagError, idListFlag, integerFlag, numberFlag, seedFlag } from "./flags.ts";

describe("flag parsers", () => {
  it("parse integers, numbers, seeds and id lists", () => {
    assert.equal(integerFlag("42"), 42);
    assert.equal(integerFlag("-3"), -3);
    assert.equal(numberFlag("0.7"), 0.7);
    assert.equal(seedFlag("18446744073709551615"), 18446744073709551615n);
    assert.deepEqual(idListFlag("1, 2,3"), [1, 2, 3]);
  });

  const bad: [string, () => unknown][] = [
    ["a non-integer", () => integerFlag("1.5")],
    ["an empty integer", () => integerFlag("")],
    ["a word as a number", () => numberFlag("hot")],
    ["a negative seed", () => seedFlag("-1")],
    ["a seed past 64 bits", () => seedFlag("18446744073709551616")],
    ["an id list with a word", () => idListFlag("1,two,3")],
    ["an id list with a hole", () => idListFlag("1,,3")],
  ];
  for (const [name, parse] of bad) {
    it(`reject ${name}`, () => assert.throws(parse, InvalidArgumentError));
  }

  it("names the flag instead of the request field", () => {
    const error = TesseraError.invalidArgument("token_ids[2]", "999 is outside the vocabulary");
    assert.equal(
      asFlagError(error, { token_ids: "--prompt-ids" }),
      "--prompt-ids[2]: 999 is outside the vocabulary",
    );
    assert.equal(asFlagError(TesseraError.invalidArgument("other", "x"), {}), "other: x");
  });
});
