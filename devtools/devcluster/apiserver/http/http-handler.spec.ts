import assert from "node:assert/strict";
import { createLogger } from "../../../../services/kernel/log.ts";
import { type ApiServer, startApiServer } from "../api-server.ts";
import { call } from "./spec-client.ts";

describe("http-handler", () => {
  let server: ApiServer;
  before(async () => {
    server = await startApiServer({}, { log: createLogger("http-handler-spec", "warn") });
  });
  after(() => server.close());

  it("serves version, health and discovery, and a NotFound Status elsewhere", async () => {
    assert.equal((await call(server, "GET", "/version")).json()["gitVersion"], "v1.35.0");
    assert.equal((await call(server, "GET", "/healthz")).text, "ok");
    assert.equal((await call(server, "GET", "/api")).json()["kind"], "APIVersions");
    assert.equal((await call(server, "GET", "/apis/apps")).json()["kind"], "APIGroup");
    const missing = await call(server, "GET", "/apis/nope/v1");
    assert.deepEqual(
      [missing.status, missing.json()["message"]],
      [404, "the server could not find the requested resource"],
    );
    assert.equal((await call(server, "GET", "/openapi/v2")).status, 404);
  });
});
