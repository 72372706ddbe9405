// A parallel group runs rope scaling as the single process does, against transformers
// (devtools/reference/expected/rope.json): dynamic rope through a pipeline of 2 stages (each stage
// builds its own per-token tables from the step's sequences) and yarn over 2 tensor ranks (each rank
// scales its own heads' cos and sin), teacher-forced, logits within 1e-3.
import fs from "node:fs";
import { freePort } from "../../kernel/free-port.ts";
import { createLogger } from "../../kernel/log.ts";
import {
  assertMatchesReference,
  makeRopeCheckpoint,
  ropeCase,
  teacherForced,
} from "../testdata/rope-reference.ts";
import { ShardMember } from "./shard-member.ts";
import type { ShardPlacement } from "./shard-placement.ts";
import { ShardedRunner } from "./sharded-runner.ts";

const log = createLogger("test", "silent");

async function startGroup(modelDir: string, stages: number, tensorSize: number) {
  const ports = await Promise.all(Array.from({ length: stages * tensorSize }, freePort));
  const peers = ports.map((p) => `127.0.0.1:${p}`);
  const placement = (g: number): ShardPlacement => ({
    stage: Math.floor(g / tensorSize),
    stages,
    tensorRank: g % tensorSize,
    tensorSize,
    peers,
    formationTimeoutMs: 60_000,
    stepTimeoutMs: 60_000,
    microBatches: 1,
  });
  const common = {
    modelDir,
    architectureOverride: undefined,
    numBlocks: 16,
    blockSize: 16,
    threads: 1,
    attention: "onnx-ops" as const,
    log,
  };
  const members = ports
    .slice(1)
    .map((port, i) => ShardMember.start({ ...common, placement: placement(i + 1), host: "127.0.0.1", port }));
  const runner = await ShardedRunner.start({ ...common, placement: placement(0) });
  return { runner, members: await Promise.all(members) };
}

for (const [name, stages, tensorSize] of [
  ["llama-dynamic", 2, 1],
  ["qwen2-yarn", 1, 2],
] as const) {
  describe(`${name} in a group of PP=${stages} TP=${tensorSize}`, () => {
    it("matches transformers' logits and greedy ids", async () => {
      const c = ropeCase(name);
      const dir = await makeRopeCheckpoint(c);
      const { runner, members } = await startGroup(dir, stages, tensorSize);
      try {
        for (const [n, p] of c.prompts.entries())
          assertMatchesReference(await teacherForced(runner, c, n), p);
      } finally {
        await runner.close();
        for (const m of members) await m.close();
        fs.rmSync(dir, { recursive: true, force: true });
      }
    });
  });
}
