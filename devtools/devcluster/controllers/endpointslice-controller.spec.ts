import assert from "node:assert/strict";
import type { KubeObject } from "../../../services/kube/kube-object.ts";
import { ENDPOINTSLICES, PODS, SERVICES } from "../objects/refs.ts";
import type { EndpointSlice } from "../objects/workload-types.ts";
import { MANAGED_BY_LABEL, SERVICE_NAME_LABEL } from "./endpointslice-controller.ts";
import { controllerCluster } from "./test-controllers.ts";

const pod = (name: string, app: string): KubeObject => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name, labels: { app } },
  spec: { containers: [{ name: "c", image: "i", ports: [{ name: "http", containerPort: 8080 }] }] },
});
const service: KubeObject = {
  apiVersion: "v1",
  kind: "Service",
  metadata: { name: "web" },
  spec: { selector: { app: "web" }, ports: [{ name: "http", port: 80, targetPort: "http" }] },
};

describe("endpointslice-controller", () => {
  it("keeps one slice per service with the selected pods' IPs and readiness, and removes it with the service", async () => {
    const { api, settle, runPods } = controllerCluster();
    api.create(SERVICES, "default", service);
    api.create(PODS, "default", pod("web-1", "web"));
    api.create(PODS, "default", pod("web-2", "web"));
    api.create(PODS, "default", pod("other", "db"));
    await settle();
    runPods((p) => p.metadata.name !== "web-2");
    await settle();
    const slices = () => api.list(ENDPOINTSLICES, { namespace: "default" }).items as EndpointSlice[];
    const [slice] = slices();
    assert.equal(slices().length, 1);
    assert.match(slice?.metadata.name ?? "", /^web-/);
    assert.equal(slice?.metadata.labels?.[SERVICE_NAME_LABEL], "web");
    assert.equal(slice?.metadata.labels?.[MANAGED_BY_LABEL], "endpointslice-controller.k8s.io");
    assert.deepEqual(slice?.ports, [{ name: "http", port: 8080, protocol: "TCP" }]);
    assert.deepEqual(slice?.endpoints.map((e) => [e.targetRef?.name, e.conditions.ready]).sort(), [
      ["web-1", true],
      ["web-2", false],
    ]);
    api.delete(PODS, "default", "web-1");
    await settle();
    assert.deepEqual(
      slices()[0]?.endpoints.map((e) => e.targetRef?.name),
      ["web-2"],
    );
    api.delete(SERVICES, "default", "web");
    await settle();
    assert.equal(slices().length, 0);
  });
});
