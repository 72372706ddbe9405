import assert from "node:assert/strict";
import { formatCpu, formatMemory, parseQuantity } from "./quantity.ts";

describe("quantity", () => {
  it("parses decimal, binary and exponent suffixes", () => {
    assert.equal(parseQuantity("500m"), 0.5);
    assert.equal(parseQuantity("2"), 2);
    assert.equal(parseQuantity(3), 3);
    assert.equal(parseQuantity("1Gi"), 1024 ** 3);
    assert.equal(parseQuantity("128Mi"), 128 * 1024 ** 2);
    assert.equal(parseQuantity("1G"), 1e9);
    assert.equal(parseQuantity("1.5"), 1.5);
    assert.equal(parseQuantity("1e3"), 1000);
    assert.equal(parseQuantity("100k"), 100_000);
  });

  it("rejects what is not a quantity", () => {
    assert.equal(parseQuantity("abc"), undefined);
    assert.equal(parseQuantity("1Xi"), undefined);
    assert.equal(parseQuantity(""), undefined);
    assert.equal(parseQuantity(undefined), undefined);
  });

  it("formats cpu in millicores and memory in Ki", () => {
    assert.equal(formatCpu(1.5), "1500m");
    assert.equal(formatCpu(4), "4");
    assert.equal(formatMemory(2 * 1024 ** 3), "2097152Ki");
  });
});
