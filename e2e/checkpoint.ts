// A checkpoint for the end-to-end tests, made by the real `tessera model create`.
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { runTessera } from "../services/cli/child-process.ts";

let tiny: Promise<string> | undefined;
/** A tiny llama checkpoint in a temp folder, made once per test process. */
export function tinyCheckpoint(): Promise<string> {
  tiny ??= (async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "tessera-e2e-"));
    process.once("exit", () => rmSync(dir, { recursive: true, force: true }));
    const out = path.join(dir, "tiny-llama");
    const made = await runTessera([
      "model",
      "create",
      "--arch",
      "llama",
      "--preset",
      "tiny",
      "--seed",
      "7",
      "--out",
      out,
    ]);
    if (made.code !== 0) throw new Error(`tessera model create failed (${made.code}): ${made.stderr}`);
    return out;
  })();
  return tiny;
}

let base: Promise<string> | undefined;
/**
 * The `base` preset (88M parameters, 12 layers, 336 MiB in float32), the size the llama.cpp peer
 * benchmark runs: for end-to-end specs that must hold at more than toy size. Made once per test process.
 */
export function baseCheckpoint(): Promise<string> {
  base ??= (async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "tessera-e2e-base-"));
    process.once("exit", () => rmSync(dir, { recursive: true, force: true }));
    const out = path.join(dir, "base-llama");
    const made = await runTessera([
      "model",
      "create",
      "--arch",
      "llama",
      "--preset",
      "base",
      "--seed",
      "7",
      "--out",
      out,
    ]);
    if (made.code !== 0) throw new Error(`tessera model create failed (${made.code}): ${made.stderr}`);
    return out;
  })();
  return base;
}
