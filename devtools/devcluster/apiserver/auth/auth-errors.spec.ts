import assert from "node:assert/strict";
import { forbidden, unauthorized } from "./auth-errors.ts";

describe("auth-errors", () => {
  it("answers 401 with kube-apiserver's Unauthorized Status", () => {
    assert.deepEqual(unauthorized().cause, {
      kind: "Status",
      apiVersion: "v1",
      metadata: {},
      status: "Failure",
      message: "Unauthorized",
      reason: "Unauthorized",
      code: 401,
    });
  });

  it("words a 403 as kube-apiserver does, for namespaced, cluster-scoped, named and path requests", () => {
    const message = (err: Error) => (err.cause as { message: string }).message;
    assert.equal(
      message(
        forbidden("x", {
          kind: "resource",
          verb: "list",
          apiGroup: "",
          resource: "pods",
          namespace: "default",
        }),
      ),
      'pods is forbidden: User "x" cannot list resource "pods" in API group "" in the namespace "default"',
    );
    const status = forbidden("system:serviceaccount:t:op", {
      kind: "resource",
      verb: "patch",
      apiGroup: "serving.tessera.dev",
      resource: "inferencemodels",
      subresource: "status",
      namespace: "t",
      name: "m",
    }).cause as { message: string; details: object; code: number };
    assert.equal(
      status.message,
      'inferencemodels.serving.tessera.dev "m" is forbidden: User "system:serviceaccount:t:op" cannot patch resource "inferencemodels/status" in API group "serving.tessera.dev" in the namespace "t"',
    );
    assert.deepEqual(status.details, { name: "m", group: "serving.tessera.dev", kind: "inferencemodels" });
    assert.equal(status.code, 403);
    assert.equal(
      message(forbidden("x", { kind: "resource", verb: "list", apiGroup: "", resource: "nodes" })),
      'nodes is forbidden: User "x" cannot list resource "nodes" in API group "" at the cluster scope',
    );
    assert.equal(
      message(forbidden("x", { kind: "non-resource", verb: "get", path: "/metrics" }, "RBAC: r")),
      'forbidden: User "x" cannot get path "/metrics": RBAC: r',
    );
  });
});
