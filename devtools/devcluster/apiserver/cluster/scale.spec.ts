import assert from "node:assert/strict";
import { statusCodeOf } from "../core/api-status.ts";
import { deploymentKind } from "../resources/apps-kinds.ts";
import { fromScale, toScale } from "./scale.ts";
import { deployment } from "./test-cluster.ts";

describe("scale", () => {
  it("presents replicas as an autoscaling/v1 Scale and writes them back", () => {
    const d = { ...deployment("d", 2), status: { replicas: 2, selector: "app=d" } };
    const scale = toScale(deploymentKind, d);
    assert.deepEqual(
      [scale.kind, scale["spec"], scale["status"]],
      ["Scale", { replicas: 2 }, { replicas: 2, selector: "app=d" }],
    );
    const updated = fromScale(deploymentKind, d, { ...scale, spec: { replicas: 4 } });
    assert.equal((updated["spec"] as { replicas: number }).replicas, 4);
    assert.throws(
      () => fromScale(deploymentKind, d, { ...scale, spec: { replicas: -1 } }),
      (err) => statusCodeOf(err) === 422,
    );
  });
});
