import assert from "node:assert/strict";
import type { JsonObject } from "../../../../services/kube/kube-object.ts";
import { defaultPodSpec, validatePodSpec } from "./pod-defaults.ts";

describe("pod-defaults", () => {
  it("defaults restart policy, grace period and container pull policy", () => {
    const spec: JsonObject = {
      containers: [
        { name: "a", image: "x:latest" },
        { name: "b", image: "x:1", ports: [{ containerPort: 1 }] },
      ],
    };
    defaultPodSpec(spec);
    const [a, b] = spec["containers"] as JsonObject[];
    assert.deepEqual(
      [
        spec["restartPolicy"],
        spec["terminationGracePeriodSeconds"],
        a?.["imagePullPolicy"],
        b?.["imagePullPolicy"],
      ],
      ["Always", 30, "Always", "IfNotPresent"],
    );
    assert.deepEqual(b?.["ports"], [{ containerPort: 1, protocol: "TCP" }]);
  });

  it("requires containers with names and images, unique names and a known restart policy", () => {
    const errors = validatePodSpec(
      { restartPolicy: "Sometimes", containers: [{ name: "a", image: "i" }, { name: "a" }] },
      "spec",
    );
    assert.deepEqual(
      errors.map((e) => e.field),
      ["spec.containers[1].name", "spec.containers[1].image", "spec.restartPolicy"],
    );
    assert.deepEqual(
      validatePodSpec({}, "spec").map((e) => e.field),
      ["spec.containers"],
    );
  });
});
