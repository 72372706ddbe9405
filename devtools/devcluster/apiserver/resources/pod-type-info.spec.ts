import assert from "node:assert/strict";
import { podSpecInfo, podTemplateInfo } from "./pod-type-info.ts";

describe("pod-type-info", () => {
  it("keys containers by name and their ports by port and protocol (TCP by default)", () => {
    assert.deepEqual(podSpecInfo.fields?.["containers"]?.list, { type: "map", keys: ["name"] });
    assert.deepEqual(podSpecInfo.fields?.["containers"]?.elements?.fields?.["ports"]?.list, {
      type: "map",
      keys: ["containerPort", "protocol"],
      keyDefaults: { protocol: "TCP" },
    });
    assert.equal(podTemplateInfo.fields?.["spec"], podSpecInfo);
  });
});
