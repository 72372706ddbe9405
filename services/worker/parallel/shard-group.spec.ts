// Group formation and failure over real ShardLink streams (in one process): members dial and accept
// as the layout says, rank 0 learns every member's layers, frames flow both ways on a link, a member
// with another group key is refused, and a member that leaves fails every other one.
import assert from "node:assert/strict";
import { freePort } from "../../kernel/free-port.ts";
import { createLogger } from "../../kernel/log.ts";
import { type MemberServer, startMemberServer } from "./member-server.ts";
import { ShardGroup } from "./shard-group.ts";

const log = createLogger("test", "silent");

interface Started {
  groups: ShardGroup[];
  servers: MemberServer[];
}

/** A 3-stage group (one member per stage); `keyOf(g)` is member g's group key. */
async function startGroups(keyOf: (g: number) => string = () => "k"): Promise<Started> {
  const ports = await Promise.all([0, 1, 2].map(freePort));
  const peers = ports.map((p) => `127.0.0.1:${p}`);
  const groups = [0, 1, 2].map(
    (self) =>
      new ShardGroup({
        layout: { stages: 3, tensorSize: 1 },
        self,
        peers,
        groupKey: keyOf(self),
        layers: { start: self * 2, end: self * 2 + 2 },
        formationTimeoutMs: 20_000,
        log,
      }),
  );
  const servers = await Promise.all(
    groups.slice(1).map((group, i) => startMemberServer(group, "127.0.0.1", ports[i + 1]!)),
  );
  for (const g of groups) g.start();
  return { groups, servers };
}

function stopAll({ groups, servers }: Started): void {
  for (const g of groups) g.close();
  for (const s of servers) s.close();
}

describe("ShardGroup", () => {
  it("forms: every member learns it is ready, rank 0 knows every member's layers, frames flow", async () => {
    const started = await startGroups();
    try {
      const [rank0, stage1, stage2] = started.groups as [ShardGroup, ShardGroup, ShardGroup];
      await Promise.all(started.groups.map((g) => g.ready));
      assert.ok(started.groups.every((g) => g.isServing));
      const layers = [...rank0.members.values()].map((m) => [m.rank, m.layerStart, m.layerEnd]);
      assert.deepEqual(
        layers.sort((a, b) => a[0]! - b[0]!),
        [
          [0, 0, 2],
          [1, 2, 4],
          [2, 4, 6],
        ],
      );
      const received = new Promise<[number, string]>((resolve) =>
        stage2.onFrame((from, frame) => resolve([from, frame.kind.case ?? ""])),
      );
      stage1.send(2, { case: "reduce", value: { stepId: 1n, microBatch: 0, segment: 0 } });
      assert.deepEqual(await received, [1, "reduce"]);
    } finally {
      stopAll(started);
    }
  });

  it("refuses a member of another group: the dialer fails naming the mismatch", async () => {
    const started = await startGroups((g) => (g === 2 ? "other" : "k"));
    try {
      const failure = await Promise.race(started.groups.map((g) => g.failed));
      assert.match(failure.message, /group mismatch|refused/);
    } finally {
      stopAll(started);
    }
  });

  it("fails every member, for good, when one leaves", async () => {
    const started = await startGroups();
    try {
      await Promise.all(started.groups.map((g) => g.ready));
      started.groups[1]!.close();
      const [rank0, , stage2] = started.groups as [ShardGroup, ShardGroup, ShardGroup];
      assert.match((await rank0.failed).message, /parallel group failed: .*member 1/);
      assert.match((await stage2.failed).message, /parallel group failed/);
      assert.ok(!rank0.isServing && !stage2.isServing);
    } finally {
      stopAll(started);
    }
  });
});
