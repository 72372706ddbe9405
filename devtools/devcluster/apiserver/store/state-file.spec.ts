import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { ManualClock } from "../../../../services/kernel/manual-clock.ts";
import { ObjectStore } from "./object-store.ts";
import { loadStateFile, StateFileWriter } from "./state-file.ts";

describe("state-file", () => {
  it("writes shortly after changes and loads back", async () => {
    const file = path.join(mkdtempSync(path.join(os.tmpdir(), "state-")), "state.json");
    const store = new ObjectStore();
    const clock = new ManualClock();
    const writer = new StateFileWriter(file, store, clock, 100);
    writer.start();
    store.create("configmaps", {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "a", namespace: "default" },
    });
    assert.equal(await loadStateFile(file), undefined);
    await clock.advance(100);
    await writer.stop();
    const loaded = await loadStateFile(file);
    assert.equal(loaded?.revision, 1);
    assert.equal(JSON.parse(readFileSync(file, "utf8")).objects[0].object.metadata.name, "a");
  });

  it("refuses a file that is not a state file", async () => {
    const file = path.join(mkdtempSync(path.join(os.tmpdir(), "state-")), "bad.json");
    writeFileSync(file, "{}");
    await assert.rejects(loadStateFile(file), /not a dev cluster state file/);
  });
});
