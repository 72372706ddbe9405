// A checkpoint for the end-to-end tests, made by the real `tessera model create`.
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { runTessera } from "../services/cli/child-process.ts";

const made = new Map<string, Promise<string>>();
/** A llama checkpoint of `preset` in a temp folder, made once per test process by `tessera model create`. */
function presetCheckpoint(preset: "tiny" | "base"): Promise<string> {
  let checkpoint = made.get(preset);
  if (checkpoint === undefined) {
    checkpoint = (async () => {
      const dir = mkdtempSync(path.join(os.tmpdir(), `tessera-e2e-${preset}-`));
      process.once("exit", () => rmSync(dir, { recursive: true, force: true }));
      const out = path.join(dir, `${preset}-llama`);
      const args = ["model", "create", "--arch", "llama", "--preset", preset, "--seed", "7", "--out", out];
      const created = await runTessera(args);
      if (created.code !== 0)
        throw new Error(`tessera model create failed (${created.code}): ${created.stderr}`);
      return out;
    })();
    made.set(preset, checkpoint);
  }
  return checkpoint;
}

/** A tiny llama checkpoint in a temp folder, made once per test process. */
export const tinyCheckpoint = (): Promise<string> => presetCheckpoint("tiny");

/**
 * The `base` preset (88M parameters, 12 layers, 336 MiB in float32), the size the llama.cpp peer
 * benchmark runs: for end-to-end specs that must hold at more than toy size. Made once per test process.
 */
export const baseCheckpoint = (): Promise<string> => presetCheckpoint("base");
