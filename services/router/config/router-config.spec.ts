import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { loadRouterConfig, parseRouterConfig, parseRouterConfigJson } from "./router-config.ts";

const minimal = {
  models: [{ id: "m", tokenizer: "ckpt" }],
  discovery: { type: "static", file: "endpoints.yaml" },
};

describe("router config", () => {
  it("takes the config inline as JSON (--config-json), naming what is wrong", () => {
    const config = parseRouterConfigJson(JSON.stringify(minimal), "/work").value!;
    assert.equal(config.models[0]?.tokenizer, "/work/ckpt");
    assert.match(parseRouterConfigJson("{models:", "/").error?.message ?? "", /config: not JSON/);
    assert.match(parseRouterConfigJson("{}", "/").error?.message ?? "", /^models/);
  });

  it("fills every section's defaults and resolves paths against the config's folder", () => {
    const config = parseRouterConfig(minimal, "/etc/tessera").value!;
    assert.equal(config.grpcPort, 50050);
    assert.equal(config.httpPort, 8080);
    assert.equal(config.models[0]?.tokenizer, "/etc/tessera/ckpt");
    assert.deepEqual(config.discovery, {
      type: "static",
      file: "/etc/tessera/endpoints.yaml",
      pollMs: 1_000,
    });
    assert.equal(config.routing.scorers[0]?.type, "consistent-hash");
    assert.equal(config.health.watch, true);
    assert.equal(config.outliers.consecutiveFailures, 3);
    assert.equal(config.failover.maxAttempts, 3);
    assert.equal(config.cache.enabled, true);
    assert.equal(config.admission.maxQueue, 256);
  });

  it("names the first bad field, plugin parameters included", () => {
    const bad = (patch: object) => parseRouterConfig({ ...minimal, ...patch }, "/").error?.message ?? "";
    assert.match(bad({ models: [] }), /^models: /);
    assert.match(bad({ grpcPort: 70_000 }), /^grpcPort: /);
    assert.match(bad({ discovery: { type: "dns" } }), /^discovery/);
    assert.match(bad({ failover: { maxAttempts: 0 } }), /^failover\.maxAttempts: /);
    assert.match(bad({ cache: { enabeld: true } }), /^cache: /);
    assert.match(
      bad({ routing: { scorers: [{ type: "consistent-hash", epsilon: "big" }] } }),
      /^routing\.scorers\[0\]\.epsilon: /,
    );
  });

  it("reads YAML from a file", () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "tessera-config-"));
    try {
      const file = path.join(dir, "router.yaml");
      writeFileSync(
        file,
        "models: [{ id: m, tokenizer: ./ckpt }]\ndiscovery: { type: static, file: e.yaml }\ngrpcPort: 0\n",
      );
      const config = loadRouterConfig(file).value!;
      assert.equal(config.grpcPort, 0);
      assert.equal(config.models[0]?.tokenizer, path.join(dir, "ckpt"));
      assert.match(
        loadRouterConfig(path.join(dir, "missing.yaml")).error?.message ?? "",
        /cannot read config/,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
