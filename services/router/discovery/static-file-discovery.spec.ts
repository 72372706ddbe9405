import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { createLogger } from "../../kernel/log.ts";
import { ManualClock } from "../../kernel/manual-clock.ts";
import type { EndpointSpec } from "./discovery.ts";
import { parseEndpointsFile, StaticFileDiscovery } from "./static-file-discovery.ts";

describe("static file discovery", () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), "tessera-discovery-"));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it("reads YAML or JSON, naming endpoints by address unless named", () => {
    const yaml = parseEndpointsFile(
      "endpoints:\n  - { name: w0, address: 127.0.0.1:5000 }\n  - address: localhost:5001\n",
    );
    assert.deepEqual(yaml.value, [
      { name: "w0", address: "127.0.0.1:5000" },
      { name: "localhost:5001", address: "localhost:5001" },
    ]);
    const json = parseEndpointsFile('{"endpoints": [{"address": "[::1]:5000"}]}');
    assert.deepEqual(json.value, [{ name: "[::1]:5000", address: "[::1]:5000" }]);
  });

  it("reads each endpoint's role, and refuses an unknown one", () => {
    const roles = parseEndpointsFile(
      "endpoints:\n  - { address: a:1, role: prefill }\n  - { address: b:1, role: decode }\n",
    );
    assert.deepEqual(
      roles.value?.map((s) => s.role),
      ["prefill", "decode"],
    );
    assert.match(
      parseEndpointsFile("endpoints: [{ address: a:1, role: encode }]").error?.message ?? "",
      /endpoints\.0\.role/,
    );
  });

  it("names the bad entry", () => {
    assert.match(
      parseEndpointsFile("endpoints:\n  - address: nowhere\n").error?.message ?? "",
      /endpoints\.0\.address: must be host:port/,
    );
    assert.match(
      parseEndpointsFile("endpoints:\n  - { address: a:1, port: 3 }\n").error?.message ?? "",
      /endpoints\.0/,
    );
    assert.match(
      parseEndpointsFile("endpoints: [{ name: a, address: a:1 }, { name: a, address: b:1 }]").error
        ?.message ?? "",
      /duplicate name a/,
    );
  });

  it("hands the list over at start and again when the file changes, keeping the last good list", async () => {
    const file = path.join(dir, "endpoints.yaml");
    writeFileSync(file, "endpoints: [{ address: 'a:1' }]\n");
    const clock = new ManualClock();
    const discovery = new StaticFileDiscovery(file, {
      pollMs: 1_000,
      log: createLogger("test", "silent"),
      clock,
    });
    const lists: EndpointSpec[][] = [];
    await discovery.start((specs) => lists.push(specs));
    assert.deepEqual(lists, [[{ name: "a:1", address: "a:1" }]]);
    await clock.advance(1_000);
    assert.equal(lists.length, 1, "an unchanged file is not handed over again");
    writeFileSync(file, "endpoints: [{ address: 'b:2' }, { address: 'c:3' }]\n");
    await clock.advance(1_000);
    assert.deepEqual(
      lists.at(-1)?.map((s) => s.name),
      ["b:2", "c:3"],
    );
    writeFileSync(file, "endpoints: [{ address: 'nowhere' }]\n");
    await clock.advance(1_000);
    assert.equal(lists.length, 2, "an invalid file is ignored");
    await discovery.stop();
    assert.equal(clock.pending, 0);
  });

  it("fails to start on a missing or invalid file", async () => {
    const discovery = new StaticFileDiscovery(path.join(dir, "missing.yaml"), {
      pollMs: 0,
      log: createLogger("test", "silent"),
    });
    await assert.rejects(
      discovery.start(() => {}),
      /cannot read endpoints file/,
    );
  });
});
