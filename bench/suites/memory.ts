// `npm run bench -- memory`: resident weight memory and batch-1 decode of the base preset (llama, ≈88M
// parameters) stored in float32, bfloat16 and float16 (issue 16): a 16-bit checkpoint must take about
// its own size in memory, not the float32 size its weights would widen to.
// Each measurement runs in a process of its own (memory/probe.ts): the resident set a model's session
// adds to a process that has already run a tiny model's (onnxruntime's code and global state), with
// glibc's malloc told to give freed memory back (fixed mmap and trim thresholds), so what the load
// freed is not counted. Two alternating passes over the dtypes; the best speed of each counts, by CPU
// time (the wall time is recorded too).
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { createCheckpoint } from "../../devtools/model-factory/create-checkpoint.ts";
import type { CheckpointDtype } from "../../devtools/model-factory/hf-config.ts";
import { check, writeResult } from "../report.ts";

const ROOT = path.resolve(import.meta.dirname, "../../.tessera/bench");
const DTYPES: CheckpointDtype[] = ["float32", "bfloat16", "float16"];
const PASSES = 2;
const STEPS = 64;
const MiB = 2 ** 20;

interface Probe {
  dtype: string;
  rssBefore: number;
  rssLoaded: number;
  rssDecoded: number;
  decodeTokPerS: number[];
  decodeTokPerCpuS: number[];
  prefillTokPerCpuS: number[];
}

async function checkpoint(preset: "tiny" | "base", dtype: CheckpointDtype): Promise<string> {
  const out = path.join(ROOT, `llama-${preset}-${dtype}`);
  if (!fs.existsSync(path.join(out, "config.json")))
    await createCheckpoint({ arch: "llama", preset, seed: 1, out, dtype });
  return out;
}

function weightFileBytes(dir: string): number {
  return fs
    .readdirSync(dir)
    .filter((f) => f.endsWith(".safetensors"))
    .reduce((n, f) => n + fs.statSync(path.join(dir, f)).size, 0);
}

function probe(dir: string, warmDir: string): Probe {
  const out = execFileSync(
    process.execPath,
    ["--expose-gc", path.join(import.meta.dirname, "memory", "probe.ts"), dir, warmDir, String(STEPS), "2"],
    {
      encoding: "utf8",
      env: {
        ...process.env,
        GLIBC_TUNABLES: "glibc.malloc.mmap_threshold=131072:glibc.malloc.trim_threshold=131072",
      },
    },
  );
  return JSON.parse(out.trim().split("\n").at(-1)!) as Probe;
}

export async function run(): Promise<void> {
  const dirs = new Map<CheckpointDtype, { model: string; warm: string }>();
  for (const dtype of DTYPES)
    dirs.set(dtype, { model: await checkpoint("base", dtype), warm: await checkpoint("tiny", dtype) });
  const probes = new Map<CheckpointDtype, Probe[]>(DTYPES.map((d) => [d, []]));
  for (let pass = 0; pass < PASSES; pass++)
    for (const dtype of pass % 2 === 0 ? DTYPES : [...DTYPES].reverse()) {
      const { model, warm } = dirs.get(dtype)!;
      probes.get(dtype)!.push(probe(model, warm));
    }

  const figures: Record<string, unknown> = {};
  const checks = [];
  const decode = new Map<CheckpointDtype, number>();
  const prefill = new Map<CheckpointDtype, number>();
  for (const dtype of DTYPES) {
    const runs = probes.get(dtype)!;
    const checkpointBytes = weightFileBytes(dirs.get(dtype)!.model);
    const loaded = Math.min(...runs.map((r) => r.rssLoaded - r.rssBefore));
    const decoded = Math.min(...runs.map((r) => r.rssDecoded - r.rssBefore));
    decode.set(dtype, Math.max(...runs.flatMap((r) => r.decodeTokPerCpuS)));
    prefill.set(dtype, Math.max(...runs.flatMap((r) => r.prefillTokPerCpuS)));
    figures[dtype] = {
      checkpointMiB: checkpointBytes / MiB,
      residentAfterLoadMiB: loaded / MiB,
      residentAfterDecodeMiB: decoded / MiB,
      batch1DecodeTokPerS: runs.map((r) => r.decodeTokPerS),
      batch1DecodeTokPerCpuS: runs.map((r) => r.decodeTokPerCpuS),
      prefill128TokPerCpuS: runs.map((r) => r.prefillTokPerCpuS),
      runs,
    };
    checks.push(
      check(`${dtype}: resident weights after load / checkpoint`, loaded / checkpointBytes, "<=", 1.1),
    );
  }
  // Speed by CPU time: on 2 shared cores, wall time swings by 3x with the neighbours' load.
  for (const dtype of ["bfloat16", "float16"] as const) {
    figures[`${dtype}DecodeCpuOverFloat32`] = decode.get(dtype)! / decode.get("float32")!;
    figures[`${dtype}PrefillCpuOverFloat32`] = prefill.get(dtype)! / prefill.get("float32")!;
  }
  writeResult({
    suite: "memory",
    description:
      "Base preset (llama, 88M params) in float32, bfloat16 and float16, each in a fresh process after a tiny model's session (onnx-ops attention, 1 thread, glibc malloc returning freed memory): resident set the model's session adds after load (its weights) ÷ the checkpoint's safetensors bytes, after 2 rounds of 64 batch-1 decode steps and two 128-token prefills (onnxruntime's arena grown: 16-bit graphs hold a float32 copy of the matrix being multiplied), and batch-1 decode and 128-token prefill tokens per CPU-second (best of each); 2 alternating passes",
    figures,
    checks,
  });
}
