// Conformance-style checks of object lifecycles over HTTPS: finalizers and deletionTimestamp,
// ownerReference garbage collection (background, foreground, orphan), namespace deletion, and
// custom resource validation errors (422 causes naming the field).
import assert from "node:assert/strict";
import { type ApiServer, startApiServer } from "../../devtools/devcluster/apiserver/api-server.ts";
import { createLogger } from "../../services/kernel/log.ts";
import { KubeHttp } from "./http-client.ts";

// biome-ignore lint/suspicious/noExplicitAny: the assertions read deep into JSON replies
type Obj = any;
const CM = "/api/v1/namespaces/default/configmaps";

describe("dev cluster object lifecycle conformance (e2e)", () => {
  let server: ApiServer;
  let http: KubeHttp;
  const configMap = async (name: string, extra: Obj = {}) =>
    (await http.post<Obj>(CM, { apiVersion: "v1", kind: "ConfigMap", metadata: { name, ...extra } })).body;
  const ownedBy = (owner: Obj, blockOwnerDeletion = false) => ({
    ownerReferences: [
      {
        apiVersion: "v1",
        kind: "ConfigMap",
        name: owner.metadata.name,
        uid: owner.metadata.uid,
        blockOwnerDeletion,
      },
    ],
  });
  const exists = async (path: string) => (await http.get(path)).status === 200;

  before(async () => {
    server = await startApiServer({}, { log: createLogger("lifecycle-e2e", "warn") });
    http = new KubeHttp(server.url, server.caCert, server.admin);
  });
  after(() => server.close());

  it("keeps an object with finalizers until they are removed", async () => {
    await configMap("guarded", { finalizers: ["example.com/cleanup"] });
    const deleting = await http.delete<Obj>(`${CM}/guarded`);
    assert.equal(deleting.status, 202);
    const live = (await http.get<Obj>(`${CM}/guarded`)).body;
    assert.ok(live.metadata.deletionTimestamp);
    const added = await http.patch(`${CM}/guarded`, "application/merge-patch+json", {
      metadata: { finalizers: ["example.com/cleanup", "more"] },
    });
    assert.equal(added.status, 422, "no new finalizers once deleting");
    await http.patch(`${CM}/guarded`, "application/merge-patch+json", { metadata: { finalizers: null } });
    assert.equal(await exists(`${CM}/guarded`), false);
  });

  it("collects dependents in the background when their owner is deleted", async () => {
    const owner = await configMap("owner-bg");
    await configMap("dep-bg-1", ownedBy(owner));
    await configMap("dep-bg-2", ownedBy(owner));
    await http.delete(`${CM}/owner-bg`);
    await server.controllersIdle();
    assert.deepEqual([await exists(`${CM}/dep-bg-1`), await exists(`${CM}/dep-bg-2`)], [false, false]);
  });

  it("deletes in the foreground: the owner waits (foregroundDeletion) until its dependents are gone", async () => {
    const owner = await configMap("owner-fg");
    await configMap("dep-fg", { ...ownedBy(owner, true), finalizers: ["example.com/hold"] });
    await http.delete(`${CM}/owner-fg`, {
      kind: "DeleteOptions",
      apiVersion: "v1",
      propagationPolicy: "Foreground",
    });
    await server.controllersIdle();
    const waiting = (await http.get<Obj>(`${CM}/owner-fg`)).body;
    assert.deepEqual(waiting.metadata.finalizers, ["foregroundDeletion"]);
    assert.ok(
      (await http.get<Obj>(`${CM}/dep-fg`)).body.metadata.deletionTimestamp,
      "the dependent is being deleted",
    );
    await http.patch(`${CM}/dep-fg`, "application/merge-patch+json", { metadata: { finalizers: null } });
    await server.controllersIdle();
    assert.deepEqual([await exists(`${CM}/dep-fg`), await exists(`${CM}/owner-fg`)], [false, false]);
  });

  it("orphans dependents when asked, removing their owner references", async () => {
    const owner = await configMap("owner-orphan");
    await configMap("dep-orphan", ownedBy(owner));
    await http.delete(`${CM}/owner-orphan?propagationPolicy=Orphan`);
    await server.controllersIdle();
    assert.equal(await exists(`${CM}/owner-orphan`), false);
    const orphan = (await http.get<Obj>(`${CM}/dep-orphan`)).body;
    assert.equal(orphan.metadata.ownerReferences, undefined);
  });

  it("deletes a namespace's content, then the namespace; new content is refused meanwhile", async () => {
    await http.post("/api/v1/namespaces", {
      apiVersion: "v1",
      kind: "Namespace",
      metadata: { name: "doomed" },
    });
    await http.post("/api/v1/namespaces/doomed/configmaps", {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "held", finalizers: ["example.com/hold"] },
    });
    await http.post("/api/v1/namespaces/doomed/secrets", {
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: "s" },
    });
    await http.delete("/api/v1/namespaces/doomed");
    await server.controllersIdle();
    const terminating = (await http.get<Obj>("/api/v1/namespaces/doomed")).body;
    assert.equal(terminating.status.phase, "Terminating");
    assert.equal(await exists("/api/v1/namespaces/doomed/secrets/s"), false);
    const refused = await http.post<Obj>("/api/v1/namespaces/doomed/configmaps", {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "late" },
    });
    assert.deepEqual([refused.status, refused.body.reason], [403, "Forbidden"]);
    await http.patch("/api/v1/namespaces/doomed/configmaps/held", "application/merge-patch+json", {
      metadata: { finalizers: null },
    });
    await server.controllersIdle();
    assert.equal(await exists("/api/v1/namespaces/doomed"), false);
    const missing = await http.post<Obj>("/api/v1/namespaces/doomed/configmaps", {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "x" },
    });
    assert.deepEqual([missing.status, missing.body.message], [404, 'namespaces "doomed" not found']);
  });

  it("validates custom resources against the CRD schema and CEL rules, with defaults", async () => {
    const crd = {
      apiVersion: "apiextensions.k8s.io/v1",
      kind: "CustomResourceDefinition",
      metadata: { name: "gadgets.example.tessera.dev" },
      spec: {
        group: "example.tessera.dev",
        scope: "Namespaced",
        names: { plural: "gadgets", singular: "gadget", kind: "Gadget" },
        versions: [
          {
            name: "v1",
            served: true,
            storage: true,
            schema: {
              openAPIV3Schema: {
                type: "object",
                properties: {
                  spec: {
                    type: "object",
                    required: ["size"],
                    properties: {
                      size: {
                        type: "integer",
                        maximum: 10,
                        "x-kubernetes-validations": [
                          { rule: "self >= oldSelf", message: "size may only grow" },
                        ],
                      },
                      mode: { type: "string", default: "fast" },
                      tags: { type: "array", items: { type: "string", pattern: "^[a-z]+$" } },
                    },
                  },
                },
              },
            },
          },
        ],
      },
    };
    assert.equal(
      (await http.post("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd)).status,
      201,
    );
    const path = "/apis/example.tessera.dev/v1/namespaces/default/gadgets";
    const gadget = (spec: Obj) => ({
      apiVersion: "example.tessera.dev/v1",
      kind: "Gadget",
      metadata: { name: "g" },
      spec,
    });
    const invalid = await http.post<Obj>(path, gadget({ size: 11, tags: ["ok", "NO"], extra: 1 }));
    assert.equal(invalid.status, 422);
    assert.deepEqual(invalid.body.details.causes.map((c: Obj) => c.field).sort(), [
      "spec.size",
      "spec.tags[1]",
    ]);
    assert.match(invalid.body.message, /^Gadget\.example\.tessera\.dev "g" is invalid: \[/);
    const strict = await http.post<Obj>(`${path}?fieldValidation=Strict`, gadget({ size: 1, extra: 1 }));
    assert.deepEqual(
      [strict.status, strict.body.message.includes('unknown field "spec.extra"')],
      [400, true],
    );
    const made = await http.post<Obj>(path, gadget({ size: 2, extra: 1 }));
    assert.deepEqual(made.body.spec, { size: 2, mode: "fast" }, "pruned and defaulted");
    const shrink = await http.patch<Obj>(`${path}/g`, "application/merge-patch+json", { spec: { size: 1 } });
    assert.equal(shrink.status, 422);
    assert.deepEqual(shrink.body.details.causes, [
      { reason: "FieldValueInvalid", message: "Invalid value: 1: size may only grow", field: "spec.size" },
    ]);
    assert.equal(
      (await http.patch(`${path}/g`, "application/merge-patch+json", { spec: { size: 3 } })).status,
      200,
    );
  });
});
