// `tessera model create`: a deterministic random-weight Hugging Face checkpoint (config.json,
// generation_config.json, model.safetensors or shards + index, tokenizer.json, tokenizer_config.json)
// for one of the supported architectures at a preset size, with the factory's trained tokenizer or a
// real one read from a folder (then also chat_template.jinja, from the folder or a template file given
// with it, and the vocab and special token ids follow that tokenizer). The same arguments give
// byte-identical files.
import { constants } from "node:fs";
import { access, mkdir, readdir, rm, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import { Code, TesseraError } from "../../services/kernel/errors.ts";
import { type CheckpointDtype, configFileTexts } from "./hf-config.ts";
import { modelTensors, type TensorPlan } from "./model-tensors.ts";
import {
  type Arch,
  CHECKPOINT_DTYPES,
  type ModelSpec,
  modelSpec,
  type PresetName,
  ROPE_SCALINGS,
  type RopeScalingName,
} from "./presets.ts";
import { Rng } from "./prng.ts";
import {
  elementCount,
  INDEX_FILE_NAME,
  type SafetensorsDtype,
  SINGLE_FILE_NAME,
  type TensorSource,
  writeSafetensors,
} from "./safetensors-writer.ts";
import { writeTokenizerFiles } from "./tokenizer-files.ts";
import { readTokenizerFolder, type SourceTokenizer } from "./tokenizer-source.ts";

export type { CheckpointDtype } from "./hf-config.ts";

const SAFETENSORS_DTYPE: Readonly<Record<CheckpointDtype, SafetensorsDtype>> = {
  float32: "F32",
  float16: "F16",
  bfloat16: "BF16",
};

/** Values generated per chunk while streaming a tensor to disk (4 MiB of float32). */
const CHUNK_ELEMENTS = 1 << 20;

export interface CreateCheckpointOptions {
  readonly arch: Arch;
  readonly preset: PresetName;
  /** A non-negative safe integer; each tensor's values come from (seed, tensor name). */
  readonly seed: number;
  /** The folder to write into; created if missing. */
  readonly out: string;
  readonly dtype?: CheckpointDtype;
  /** Split the weights into shards of at most this many bytes of data (as save_pretrained's max_shard_size). */
  readonly maxShardBytes?: number;
  /** A folder with a real tokenizer.json + tokenizer_config.json to carry instead of the trained tokenizer. */
  readonly tokenizer?: string | undefined;
  /**
   * A chat template file (Jinja) the checkpoint carries as chat_template.jinja instead of any template in
   * the `tokenizer` folder, as save_pretrained writes it after `tokenizer.chat_template = open(file).read()`.
   * Only with `tokenizer`.
   */
  readonly chatTemplate?: string | undefined;
  /** Rope scaling in config.json (default: none). */
  readonly ropeScaling?: RopeScalingName | undefined;
}

export interface CheckpointSummary {
  readonly out: string;
  readonly arch: Arch;
  readonly preset: PresetName;
  readonly dtype: CheckpointDtype;
  readonly seed: number;
  readonly spec: ModelSpec;
  readonly parameterCount: number;
  /** Tokens in tokenizer.json (≤ the config's vocab_size when the corpus runs out of merges; equal for a real tokenizer). */
  readonly tokenizerVocabSize: number;
  /** File names written into `out`. */
  readonly files: string[];
  /** Bytes written, all files together. */
  readonly bytes: number;
}

/** The tensors of `spec` as lazily generated sources: N(0, initStd)-ish weights from (seed, name), norms 1. */
export function checkpointTensors(spec: ModelSpec, seed: number, dtype: CheckpointDtype): TensorSource[] {
  return modelTensors(spec).map((t) => ({
    name: t.name,
    dtype: SAFETENSORS_DTYPE[dtype],
    shape: t.shape,
    chunks: () => generate(t, spec.initStd, seed),
  }));
}

function* generate(t: TensorPlan, std: number, seed: number): Generator<Float32Array> {
  const rng = new Rng(seed, t.name);
  for (let left = elementCount(t.shape); left > 0; left -= CHUNK_ELEMENTS) {
    const chunk = new Float32Array(Math.min(left, CHUNK_ELEMENTS));
    if (t.init === "ones") chunk.fill(1);
    else rng.fillNormal(chunk, std);
    yield chunk;
  }
}

function validate(options: CreateCheckpointOptions): { spec: ModelSpec; dtype: CheckpointDtype } {
  const spec = modelSpec(options.arch, options.preset);
  const dtype = options.dtype ?? "float32";
  if (!CHECKPOINT_DTYPES.includes(dtype)) {
    throw TesseraError.invalidArgument(
      "dtype",
      `unknown dtype "${dtype}"; valid: ${CHECKPOINT_DTYPES.join(", ")}`,
    );
  }
  if (!Number.isSafeInteger(options.seed) || options.seed < 0) {
    throw TesseraError.invalidArgument("seed", `must be a non-negative integer, got ${options.seed}`);
  }
  const shard = options.maxShardBytes;
  if (shard !== undefined && !(Number.isSafeInteger(shard) && shard > 0)) {
    throw TesseraError.invalidArgument("maxShardBytes", `must be a positive integer, got ${shard}`);
  }
  const rope = options.ropeScaling;
  if (rope !== undefined && !ROPE_SCALINGS.includes(rope)) {
    throw TesseraError.invalidArgument(
      "ropeScaling",
      `unknown rope scaling "${rope}"; valid: ${ROPE_SCALINGS.join(", ")}`,
    );
  }
  if (options.chatTemplate !== undefined && options.tokenizer === undefined) {
    throw TesseraError.invalidArgument(
      "chatTemplate",
      "needs a real tokenizer (--tokenizer DIR) to go with; the factory's own tokenizer has its template",
    );
  }
  if (typeof options.out !== "string" || options.out === "") {
    throw TesseraError.invalidArgument("out", "a folder to write the checkpoint into is required");
  }
  return { spec, dtype };
}

function reasonOf(err: unknown): string {
  const e = err as NodeJS.ErrnoException;
  const reasons: Record<string, string> = {
    EACCES: "permission denied",
    EPERM: "operation not permitted",
    EROFS: "read-only file system",
    ENOTDIR: "a part of the path is a file, not a folder",
    EEXIST: "a file of that name exists",
    ENOSPC: "no space left on the device",
  };
  const reason = e.code !== undefined ? reasons[e.code] : undefined;
  return reason !== undefined ? `${reason} (${e.code})` : e instanceof Error ? e.message : String(err);
}

/** Creates `out` if needed and checks that it is a writable folder. */
async function prepareOut(out: string): Promise<void> {
  try {
    await mkdir(out, { recursive: true });
    if (!(await stat(out)).isDirectory()) {
      throw Object.assign(new Error("not a folder"), { code: "EEXIST" });
    }
    await access(out, constants.W_OK);
  } catch (err) {
    throw new TesseraError(
      Code.FAILED_PRECONDITION,
      `out: cannot write a checkpoint into ${out}: ${reasonOf(err)}`,
      {
        cause: err,
      },
    );
  }
  // Weights (or a chat template) of an earlier checkpoint in the same folder would be mixed up with the new ones.
  const stale = (await readdir(out)).filter(
    (f) =>
      f === SINGLE_FILE_NAME ||
      f === INDEX_FILE_NAME ||
      f === CHAT_TEMPLATE_FILE ||
      /^model-\d{5}-of-\d{5}\.safetensors$/.test(f),
  );
  await Promise.all(stale.map((f) => rm(path.join(out, f), { force: true })));
}

const CHAT_TEMPLATE_FILE = "chat_template.jinja";

export async function createCheckpoint(options: CreateCheckpointOptions): Promise<CheckpointSummary> {
  const valid = validate(options);
  const dtype = valid.dtype;
  const source: SourceTokenizer | undefined =
    options.tokenizer === undefined
      ? undefined
      : await readTokenizerFolder(options.tokenizer, options.chatTemplate);
  const spec = source === undefined ? valid.spec : { ...valid.spec, vocabSize: source.vocabSize };
  const out = path.resolve(options.out);
  await prepareOut(out);
  try {
    const files: string[] = [];
    let bytes = 0;
    const write = async (name: string, text: string) => {
      await writeFile(path.join(out, name), text);
      files.push(name);
      bytes += Buffer.byteLength(text);
    };
    const configOptions = { ids: source?.ids, ropeScaling: options.ropeScaling };
    for (const [name, text] of Object.entries(configFileTexts(spec, dtype, configOptions)))
      await write(name, text);

    const tensors = checkpointTensors(spec, options.seed, dtype);
    const weights = await writeSafetensors(
      out,
      tensors,
      options.maxShardBytes === undefined ? {} : { maxShardBytes: options.maxShardBytes },
    );
    files.push(...weights.files);
    bytes += weights.fileBytes;

    let tokenizerVocabSize = spec.vocabSize;
    if (source === undefined) {
      tokenizerVocabSize = await writeTokenizerFiles(out, spec.vocabSize);
      files.push("tokenizer.json", "tokenizer_config.json");
      for (const f of ["tokenizer.json", "tokenizer_config.json"])
        bytes += (await stat(path.join(out, f))).size;
    } else {
      for (const [name, text] of Object.entries(source.files)) await write(name, text);
    }

    return {
      out,
      arch: spec.arch,
      preset: spec.preset,
      dtype,
      seed: options.seed,
      spec,
      parameterCount: tensors.reduce((n, t) => n + elementCount(t.shape), 0),
      tokenizerVocabSize,
      files,
      bytes,
    };
  } catch (err) {
    if (err instanceof TesseraError) throw err;
    throw new TesseraError(Code.INTERNAL, `writing the checkpoint into ${out} failed: ${reasonOf(err)}`, {
      cause: err,
    });
  }
}
