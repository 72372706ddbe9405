import assert from "node:assert/strict";
import { ResourceRegistry } from "../resources/registry.ts";
import { aggregatedDiscovery, apiGroupList, apiResourceList, wantsAggregatedDiscovery } from "./discovery.ts";

describe("discovery", () => {
  const registry = new ResourceRegistry();

  it("lists resources with verbs and subresources per group-version", () => {
    const list = apiResourceList(registry, "apps", "v1") as {
      resources: { name: string; kind: string; verbs: string[] }[];
    };
    const names = list.resources.map((r) => r.name);
    assert.ok(
      names.includes("deployments") &&
        names.includes("deployments/status") &&
        names.includes("deployments/scale"),
    );
    assert.ok(list.resources.find((r) => r.name === "deployments")?.verbs.includes("watch"));
    assert.equal(apiResourceList(registry, "nope", "v1"), undefined);
  });

  it("lists groups with preferred versions, and the aggregated form per core / named groups", () => {
    const groups = (
      apiGroupList(registry) as { groups: { name: string; preferredVersion: { groupVersion: string } }[] }
    ).groups;
    assert.equal(groups.find((g) => g.name === "apps")?.preferredVersion.groupVersion, "apps/v1");
    const core = aggregatedDiscovery(registry, true) as { items: { metadata: { name: string } }[] };
    assert.deepEqual(
      core.items.map((i) => i.metadata.name),
      [""],
    );
    assert.ok(
      wantsAggregatedDiscovery(
        "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json",
      ),
    );
    assert.ok(
      !wantsAggregatedDiscovery("application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList"),
    );
  });
});
