// A checkpoint for the end-to-end tests, made by the real `tessera model create`.
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { runTessera } from "../services/cli/child-process.ts";

const made = new Map<string, Promise<string>>();
/**
 * A checkpoint of `arch` at `preset` in a temp folder named <preset>-<arch> (the model id it serves
 * under), made once per test process by `tessera model create`.
 */
export function presetCheckpoint(preset: "tiny" | "base", arch = "llama"): Promise<string> {
  const key = `${preset}-${arch}`;
  let checkpoint = made.get(key);
  if (checkpoint === undefined) {
    checkpoint = (async () => {
      const dir = mkdtempSync(path.join(os.tmpdir(), `tessera-e2e-${key}-`));
      process.once("exit", () => rmSync(dir, { recursive: true, force: true }));
      const out = path.join(dir, key);
      const args = ["model", "create", "--arch", arch, "--preset", preset, "--seed", "7", "--out", out];
      const created = await runTessera(args);
      if (created.code !== 0)
        throw new Error(`tessera model create failed (${created.code}): ${created.stderr}`);
      return out;
    })();
    made.set(key, checkpoint);
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
