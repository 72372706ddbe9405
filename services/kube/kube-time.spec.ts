import assert from "node:assert/strict";
import { formatMicroTime, formatTime } from "./kube-time.ts";

describe("kube time", () => {
  it("formats Time at second and MicroTime at microsecond precision", () => {
    assert.equal(formatTime(Date.UTC(2025, 0, 2, 3, 4, 5, 678)), "2025-01-02T03:04:05Z");
    assert.equal(formatMicroTime(Date.UTC(2025, 0, 2, 3, 4, 5, 678)), "2025-01-02T03:04:05.678000Z");
  });
});
