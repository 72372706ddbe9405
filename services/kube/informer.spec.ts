import assert from "node:assert/strict";
import { obj, ScriptedClient } from "../../operator/testing/scripted-client.ts";
import { createLogger } from "../kernel/log.ts";
import { ManualClock, settle } from "../kernel/manual-clock.ts";
import { type ChangeType, Informer } from "./informer.ts";
import { PODS } from "./resources.ts";

const log = createLogger("informer-spec", "silent");

describe("informer", () => {
  let clock: ManualClock;
  let scripted: ScriptedClient;
  let informer: Informer<ReturnType<typeof obj>>;
  let changes: string[];

  beforeEach(() => {
    clock = new ManualClock();
    scripted = new ScriptedClient();
    informer = new Informer(scripted.asClient(), PODS, { namespace: "ns", clock, log });
    changes = [];
    informer.onChange((type: ChangeType, o) =>
      changes.push(`${type} ${o.metadata.name}@${o.metadata.resourceVersion}`),
    );
  });
  afterEach(() => informer.stop());

  it("lists, syncs, then watches from the list's version; bookmarks and ended watches resume", async () => {
    scripted.lists.push({ items: [obj("a", "5")], resourceVersion: "10" });
    informer.start();
    await informer.synced();
    await settle();
    assert.deepEqual(changes, ["ADDED a@5"]);
    assert.equal(scripted.lastWatch?.resourceVersion, "10");
    scripted.lastWatch!.send("MODIFIED", obj("a", "11"));
    scripted.lastWatch!.send("ADDED", obj("b", "12"));
    scripted.lastWatch!.send("BOOKMARK", obj("", "15"));
    scripted.lastWatch!.end();
    await settle();
    assert.equal(scripted.watches.length, 2);
    assert.equal(scripted.lastWatch?.resourceVersion, "15");
    scripted.lastWatch!.send("DELETED", obj("a", "16"));
    assert.deepEqual(changes, ["ADDED a@5", "MODIFIED a@11", "ADDED b@12", "DELETED a@16"]);
    assert.deepEqual(
      informer.list().map((o) => o.metadata.name),
      ["b"],
    );
    assert.equal(informer.get("ns", "b")?.metadata.resourceVersion, "12");
  });

  it("relists at once on 410 Gone, reporting what changed and vanished meanwhile", async () => {
    scripted.lists.push({ items: [obj("a", "5"), obj("b", "6")], resourceVersion: "10" });
    scripted.lists.push({ items: [obj("a", "20"), obj("c", "21")], resourceVersion: "22" });
    informer.start();
    await informer.synced();
    await settle();
    scripted.lastWatch!.gone();
    await settle();
    assert.equal(informer.relists, 1);
    assert.deepEqual(changes.slice(2), ["MODIFIED a@20", "ADDED c@21", "DELETED b@6"]);
    assert.equal(scripted.lastWatch?.resourceVersion, "22");
  });

  it("backs off 1 s, 2 s, 4 s between failed lists and resets after a success", async () => {
    for (let i = 0; i < 3; i++) scripted.lists.push(new Error("connection refused"));
    scripted.lists.push({ items: [], resourceVersion: "1" });
    informer.start();
    await settle();
    const callsAt = async (ms: number) => {
      await clock.advance(ms);
      return scripted.listCalls;
    };
    assert.equal(scripted.listCalls, 1);
    assert.deepEqual([await callsAt(999), await callsAt(1)], [1, 2]);
    assert.deepEqual([await callsAt(1_999), await callsAt(1)], [2, 3]);
    assert.deepEqual([await callsAt(3_999), await callsAt(1)], [3, 4]);
    assert.equal(informer.hasSynced, true);
  });

  it("stops its watch on stop()", async () => {
    scripted.lists.push({ items: [], resourceVersion: "1" });
    informer.start();
    await informer.synced();
    await settle();
    await informer.stop();
    assert.equal(scripted.lastWatch?.stopped, true);
  });
});
