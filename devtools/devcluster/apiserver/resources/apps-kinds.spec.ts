import assert from "node:assert/strict";
import type { KubeObject } from "../../../../services/kube/kube-object.ts";
import { deploymentKind } from "./apps-kinds.ts";

const deployment = (selector: unknown, labels: Record<string, string>): KubeObject => ({
  apiVersion: "apps/v1",
  kind: "Deployment",
  metadata: { name: "d" },
  spec: { selector, template: { metadata: { labels }, spec: { containers: [{ name: "c", image: "i" }] } } },
});

describe("apps-kinds", () => {
  it("defaults replicas and the rolling update strategy", () => {
    const d = deployment({ matchLabels: { app: "a" } }, { app: "a" });
    deploymentKind.defaults?.(d);
    const spec = d["spec"] as { replicas: number; strategy: { rollingUpdate: { maxSurge: string } } };
    assert.deepEqual([spec.replicas, spec.strategy.rollingUpdate.maxSurge], [1, "25%"]);
  });

  it("requires a selector matching the template labels and keeps it immutable", () => {
    assert.deepEqual(
      deploymentKind
        .validate?.(deployment({ matchLabels: { app: "a" } }, { app: "b" }), undefined)
        .map((e) => e.field),
      ["spec.template.metadata.labels"],
    );
    const old = deployment({ matchLabels: { app: "a" } }, { app: "a", v: "1" });
    const changed = deployment({ matchLabels: { v: "1" } }, { app: "a", v: "1" });
    assert.deepEqual(
      deploymentKind.validate?.(changed, old).map((e) => e.field),
      ["spec.selector"],
    );
  });
});
