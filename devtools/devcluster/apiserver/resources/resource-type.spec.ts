import assert from "node:assert/strict";
import { apiVersionOf, groupResourceOf, humanDuration } from "./resource-type.ts";

describe("resource-type", () => {
  it("prints ages like kubectl's HumanDuration", () => {
    const s = 1000;
    assert.deepEqual(
      [
        5 * s,
        119 * s,
        150 * s,
        600 * s,
        3 * 3600 * s + 5 * 60 * s,
        30 * 3600 * s,
        3 * 86400 * s + 3600 * s,
        400 * 86400 * s,
        3 * 365 * 86400 * s,
      ].map(humanDuration),
      ["5s", "119s", "2m30s", "10m", "3h5m", "30h", "3d1h", "400d", "3y"],
    );
  });

  it("names group-resources and apiVersions", () => {
    assert.equal(groupResourceOf({ group: "", plural: "pods" }), "pods");
    assert.equal(groupResourceOf({ group: "apps", plural: "deployments" }), "deployments.apps");
    assert.equal(apiVersionOf({ group: "apps", version: "v1" }), "apps/v1");
  });
});
