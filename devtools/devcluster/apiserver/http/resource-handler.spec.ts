import assert from "node:assert/strict";
import { createLogger } from "../../../../services/kernel/log.ts";
import { type ApiServer, startApiServer } from "../api-server.ts";
import { call } from "./spec-client.ts";

describe("resource-handler", () => {
  let server: ApiServer;
  const NS = "/api/v1/namespaces/default";

  before(async () => {
    server = await startApiServer({}, { log: createLogger("resource-handler-spec", "warn") });
  });
  after(() => server.close());

  it("streams pod logs from the registered source", async () => {
    await call(server, "POST", `${NS}/pods`, {
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "p" },
      spec: { containers: [{ name: "c", image: "i" }] },
    });
    assert.equal((await call(server, "GET", `${NS}/pods/p/log`)).status, 400, "no kubelet, no logs");
    server.setPodLogSource(async function* (request) {
      yield `${request.name}/${request.container ?? "-"} line 1\n`;
      yield "line 2\n";
    });
    const logs = await call(server, "GET", `${NS}/pods/p/log?container=c`);
    assert.deepEqual([logs.status, logs.text], [200, "p/c line 1\nline 2\n"]);
  });

  it("deletes collections by selector and answers single objects as Tables", async () => {
    for (const name of ["x1", "x2", "y1"])
      await call(server, "POST", `${NS}/configmaps`, {
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name, labels: { group: name[0] ?? "" } },
      });
    const removed = await call(server, "DELETE", `${NS}/configmaps?labelSelector=group%3Dx`);
    assert.deepEqual(
      (removed.json()["items"] as { metadata: { name: string } }[]).map((i) => i.metadata.name),
      ["x1", "x2"],
    );
    const table = await call(server, "GET", `${NS}/configmaps/y1`, undefined, {
      Accept: "application/json;as=Table;v=v1;g=meta.k8s.io",
    });
    assert.equal(table.json()["kind"], "Table");
  });

  it("answers a successful core deletion with a Success Status and unknown methods with 405", async () => {
    const deleted = await call(server, "DELETE", `${NS}/configmaps/y1`);
    assert.deepEqual([deleted.json()["kind"], deleted.json()["status"]], ["Status", "Success"]);
    assert.equal((await call(server, "POST", `${NS}/configmaps/y1`, {})).status, 405);
    assert.equal((await call(server, "GET", `${NS}/configmaps/y1/nope`)).status, 404);
  });

  it("finalizes namespaces through the finalize subresource", async () => {
    await call(server, "POST", "/api/v1/namespaces", {
      apiVersion: "v1",
      kind: "Namespace",
      metadata: { name: "fin" },
    });
    const finalized = await call(server, "PUT", "/api/v1/namespaces/fin/finalize", {
      apiVersion: "v1",
      kind: "Namespace",
      metadata: { name: "fin" },
      spec: { finalizers: [] },
    });
    assert.deepEqual((finalized.json()["spec"] as { finalizers: string[] }).finalizers, []);
  });
});
