// Conformance-style checks of the REST API over HTTPS: Status errors (404, 409, 422 with causes),
// optimistic concurrency, generateName, generation, dry-run, selectors, the three patch types,
// status and scale subresources, Table responses and protobuf request bodies.
import assert from "node:assert/strict";
import { create, toBinary } from "@bufbuild/protobuf";
import { type ApiServer, startApiServer } from "../../devtools/devcluster/apiserver/api-server.ts";
import { SecretSchema } from "../../devtools/devcluster/proto/gen/k8s/core_pb.js";
import { ObjectMetaSchema } from "../../devtools/devcluster/proto/gen/k8s/meta_pb.js";
import { UnknownSchema } from "../../devtools/devcluster/proto/gen/k8s/runtime_pb.js";
import { createLogger } from "../../services/kernel/log.ts";
import { KubeHttp } from "./http-client.ts";

const NS = "/api/v1/namespaces/default";
const DEPLOYMENTS = "/apis/apps/v1/namespaces/default/deployments";
// biome-ignore lint/suspicious/noExplicitAny: the assertions read deep into JSON replies
type Obj = any;

const deployment = (name: string, replicas = 1) => ({
  apiVersion: "apps/v1",
  kind: "Deployment",
  metadata: { name, labels: { app: name } },
  spec: {
    replicas,
    selector: { matchLabels: { app: name } },
    template: {
      metadata: { labels: { app: name } },
      spec: {
        containers: [
          { name: "a", image: "img:1" },
          { name: "b", image: "img:1" },
        ],
      },
    },
  },
});

describe("dev cluster REST API conformance (e2e)", () => {
  let server: ApiServer;
  let http: KubeHttp;

  before(async () => {
    server = await startApiServer({}, { log: createLogger("api-e2e", "warn") });
    http = new KubeHttp(server.url, server.caCert, server.admin);
  });
  after(() => server.close());

  it("returns Status objects for 404 and 409 AlreadyExists, and 409 Conflict for a stale resourceVersion", async () => {
    const missing = await http.get(`${NS}/configmaps/nope`);
    assert.equal(missing.status, 404);
    assert.deepEqual(
      [missing.body["kind"], missing.body["reason"], missing.body["message"]],
      ["Status", "NotFound", 'configmaps "nope" not found'],
    );
    const cm = { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "occ" }, data: { a: "1" } };
    const created = await http.post<Obj>(`${NS}/configmaps`, cm);
    assert.equal(created.status, 201);
    const again = await http.post(`${NS}/configmaps`, cm);
    assert.deepEqual([again.status, again.body["reason"]], [409, "AlreadyExists"]);
    const stale = {
      ...cm,
      metadata: { name: "occ", resourceVersion: created.body.metadata.resourceVersion },
    };
    assert.equal((await http.put(`${NS}/configmaps/occ`, { ...stale, data: { a: "2" } })).status, 200);
    const conflict = await http.put(`${NS}/configmaps/occ`, { ...stale, data: { a: "3" } });
    assert.deepEqual([conflict.status, conflict.body["reason"]], [409, "Conflict"]);
    assert.match(String(conflict.body["message"]), /the object has been modified/);
  });

  it("answers invalid objects with 422 and one cause per field", async () => {
    const bad = await http.post<Obj>(`${NS}/pods`, {
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "Bad_Name" },
      spec: { containers: [{ name: "c" }] },
    });
    assert.equal(bad.status, 422);
    assert.equal(bad.body.reason, "Invalid");
    assert.deepEqual(bad.body.details.causes.map((c: Obj) => c.field).sort(), [
      "metadata.name",
      "spec.containers[0].image",
    ]);
    assert.match(bad.body.message, /^Pod "Bad_Name" is invalid: \[/);
  });

  it("generates names, counts generations, and leaves the store alone on dry-run", async () => {
    const made = await http.post<Obj>(`${NS}/configmaps`, {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { generateName: "gen-" },
    });
    assert.match(made.body.metadata.name, /^gen-[a-z0-9]{5}$/);
    const dry = await http.post<Obj>(`${DEPLOYMENTS}?dryRun=All`, deployment("dry"));
    assert.equal(dry.status, 201);
    assert.equal((await http.get(`${DEPLOYMENTS}/dry`)).status, 404);
    const d = await http.post<Obj>(DEPLOYMENTS, deployment("gen"));
    assert.equal(d.body.metadata.generation, 1);
    const scaled = await http.patch<Obj>(`${DEPLOYMENTS}/gen`, "application/merge-patch+json", {
      spec: { replicas: 2 },
    });
    assert.equal(scaled.body.metadata.generation, 2);
    const labelled = await http.patch<Obj>(`${DEPLOYMENTS}/gen`, "application/merge-patch+json", {
      metadata: { labels: { x: "y" } },
    });
    assert.equal(labelled.body.metadata.generation, 2, "metadata changes keep the generation");
  });

  it("lists with label selectors (=, !=, in, notin, exists, !exists) and field selectors", async () => {
    for (const [name, labels] of [
      ["s1", { env: "prod", tier: "web" }],
      ["s2", { env: "dev", tier: "web" }],
      ["s3", { env: "test" }],
    ] as const) {
      await http.post(`${NS}/configmaps`, {
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name, labels },
      });
    }
    const names = async (query: string) =>
      (await http.get<Obj>(`${NS}/configmaps?${query}`)).body.items
        .map((i: Obj) => i.metadata.name)
        .filter((n: string) => /^s\d$/.test(n));
    assert.deepEqual(await names(`labelSelector=${encodeURIComponent("env=prod")}`), ["s1"]);
    assert.deepEqual(await names(`labelSelector=${encodeURIComponent("env!=prod")}`), ["s2", "s3"]);
    assert.deepEqual(await names(`labelSelector=${encodeURIComponent("env in (dev,test)")}`), ["s2", "s3"]);
    assert.deepEqual(await names(`labelSelector=${encodeURIComponent("env notin (dev),tier")}`), ["s1"]);
    assert.deepEqual(await names(`labelSelector=${encodeURIComponent("!tier")}`), ["s3"]);
    assert.deepEqual(await names(`fieldSelector=${encodeURIComponent("metadata.name=s2")}`), ["s2"]);
    const page = await http.get<Obj>(`${NS}/configmaps?limit=2`);
    assert.equal(page.body.items.length, 2);
    const rest = await http.get<Obj>(`${NS}/configmaps?limit=100&continue=${page.body.metadata.continue}`);
    assert.ok(
      rest.body.items.every(
        (i: Obj) => !page.body.items.some((p: Obj) => p.metadata.name === i.metadata.name),
      ),
    );
  });

  it("applies strategic merge patches by merge key with $setElementOrder, JSON patches and merge patches", async () => {
    await http.post(DEPLOYMENTS, deployment("smp"));
    const smp = await http.patch<Obj>(`${DEPLOYMENTS}/smp`, "application/strategic-merge-patch+json", {
      spec: {
        template: {
          spec: {
            "$setElementOrder/containers": [{ name: "b" }, { name: "a" }],
            containers: [{ name: "b", image: "img:2" }],
          },
        },
      },
    });
    assert.deepEqual(
      smp.body.spec.template.spec.containers.map((c: Obj) => `${c.name}=${c.image}`),
      ["b=img:2", "a=img:1"],
    );
    const removed = await http.patch<Obj>(`${DEPLOYMENTS}/smp`, "application/strategic-merge-patch+json", {
      spec: { template: { spec: { containers: [{ name: "a", $patch: "delete" }] } } },
    });
    assert.deepEqual(
      removed.body.spec.template.spec.containers.map((c: Obj) => c.name),
      ["b"],
    );
    const json = await http.patch<Obj>(`${DEPLOYMENTS}/smp`, "application/json-patch+json", [
      { op: "replace", path: "/spec/replicas", value: 4 },
    ]);
    assert.equal(json.body.spec.replicas, 4);
    const merge = await http.patch<Obj>(`${DEPLOYMENTS}/smp`, "application/merge-patch+json", {
      metadata: { labels: { app: null, team: "x" } },
    });
    assert.deepEqual(merge.body.metadata.labels, { team: "x" });
  });

  it("keeps status and spec apart through the status and scale subresources", async () => {
    await http.post(DEPLOYMENTS, deployment("sub", 2));
    const current = (await http.get<Obj>(`${DEPLOYMENTS}/sub`)).body;
    const viaMain = await http.put<Obj>(`${DEPLOYMENTS}/sub`, { ...current, status: { replicas: 9 } });
    assert.equal(viaMain.body.status?.replicas, undefined, "the main resource ignores status");
    const viaStatus = await http.put<Obj>(`${DEPLOYMENTS}/sub/status`, {
      ...viaMain.body,
      spec: { ...viaMain.body.spec, replicas: 7 },
      status: { replicas: 2 },
    });
    assert.deepEqual(
      [viaStatus.body.spec.replicas, viaStatus.body.status.replicas, viaStatus.body.metadata.generation],
      [2, 2, 1],
    );
    const scale = await http.get<Obj>(`${DEPLOYMENTS}/sub/scale`);
    assert.deepEqual(
      [scale.body.kind, scale.body.apiVersion, scale.body.spec.replicas, scale.body.status.replicas],
      ["Scale", "autoscaling/v1", 2, 2],
    );
    const rescaled = await http.patch<Obj>(`${DEPLOYMENTS}/sub/scale`, "application/merge-patch+json", {
      spec: { replicas: 5 },
    });
    assert.equal(rescaled.body.spec.replicas, 5);
    assert.equal((await http.get<Obj>(`${DEPLOYMENTS}/sub`)).body.spec.replicas, 5);
  });

  it("prints Tables with the resource's columns when asked", async () => {
    const table = await http.get<Obj>(`${DEPLOYMENTS}`, {
      Accept: "application/json;as=Table;v=v1;g=meta.k8s.io,application/json",
    });
    assert.equal(table.body.kind, "Table");
    assert.deepEqual(table.body.columnDefinitions.map((c: Obj) => c.name).slice(0, 5), [
      "Name",
      "Ready",
      "Up-to-date",
      "Available",
      "Age",
    ]);
    const row = table.body.rows.find((r: Obj) => r.cells[0] === "sub");
    assert.equal(row.cells[1], "0/5");
    assert.equal(row.object.kind, "PartialObjectMetadata");
  });

  it("decodes protobuf Secrets and answers in JSON", async () => {
    const secret = create(SecretSchema, {
      metadata: create(ObjectMetaSchema, { name: "proto", labels: { owner: "helm" } }),
      data: { key: Buffer.from("value") },
      type: "helm.sh/release.v1",
    });
    const envelope = create(UnknownSchema, {
      typeMeta: { apiVersion: "v1", kind: "Secret" },
      raw: toBinary(SecretSchema, secret),
      contentType: "application/vnd.kubernetes.protobuf",
    });
    const body = Buffer.concat([Buffer.from("k8s\0", "latin1"), toBinary(UnknownSchema, envelope)]);
    const made = await http.call<Obj>("POST", `${NS}/secrets`, body, {
      "Content-Type": "application/vnd.kubernetes.protobuf",
      Accept: "application/vnd.kubernetes.protobuf, application/json",
    });
    assert.equal(made.status, 201);
    assert.equal(made.headers["content-type"], "application/json");
    assert.deepEqual(
      [made.body.type, made.body.metadata.labels.owner, Buffer.from(made.body.data.key, "base64").toString()],
      ["helm.sh/release.v1", "helm", "value"],
    );
    // A kind whose protobuf form the server does not decode (it serves no batch/v1) is refused.
    const wrongKind = create(UnknownSchema, {
      typeMeta: { apiVersion: "batch/v1", kind: "CronJob" },
      raw: new Uint8Array(),
    });
    const refused = await http.call(
      "POST",
      `${NS}/pods`,
      Buffer.concat([Buffer.from("k8s\0", "latin1"), toBinary(UnknownSchema, wrongKind)]),
      { "Content-Type": "application/vnd.kubernetes.protobuf" },
    );
    assert.equal(refused.status, 415);
  });

  it("serves discovery, aggregated discovery and an OpenAPI v3 PATCH operation per kind with fieldValidation", async () => {
    const aggregated = await http.get<Obj>("/apis", {
      Accept: "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json",
    });
    assert.equal(
      aggregated.headers["content-type"],
      "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList",
    );
    assert.ok(aggregated.body.items.some((g: Obj) => g.metadata.name === "apps"));
    const apps = await http.get<Obj>("/apis/apps/v1");
    assert.ok(apps.body.resources.some((r: Obj) => r.name === "deployments/scale" && r.kind === "Scale"));
    const index = await http.get<Obj>("/openapi/v3");
    const doc = await http.get<Obj>(index.body.paths["apis/apps/v1"].serverRelativeURL);
    const patch = doc.body.paths["/apis/apps/v1/namespaces/{namespace}/deployments/{name}"].patch;
    assert.deepEqual(patch["x-kubernetes-group-version-kind"], {
      group: "apps",
      version: "v1",
      kind: "Deployment",
    });
    assert.ok(patch.parameters.some((p: Obj) => p.name === "fieldValidation" && p.in === "query"));
  });
});
