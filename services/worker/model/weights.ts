// All tensors of a checkpoint folder: one model.safetensors, or shards listed by
// model.safetensors.index.json ({"weight_map": {tensor name: shard file}}).
import fs from "node:fs";
import path from "node:path";
import { Code, TesseraError } from "../../kernel/errors.ts";
import type { WeightDtype } from "./dtype.ts";
import { type PrequantizedFormat, parsePrequantized } from "./prequantized-config.ts";
import { packedShapes, type RepackedMatrix, repackPrequantized } from "./prequantized-repack.ts";
import type { QuantOptions } from "./quantize-blocks.ts";
import { SafetensorsFile, type StoredTensor, type Tensor, widened } from "./safetensors.ts";
import type { TensorSlice } from "./tensor-slice.ts";

export class WeightStore {
  private readonly byName: Map<string, SafetensorsFile>;
  /** readStored widens 16-bit tensors to float32 (`tessera serve --dtype float32`). */
  private widen = false;
  /** `tessera serve --quantization`: the graphs keep projection matrices quantized (block-wise or per channel). */
  quantization?: QuantOptions;
  /** A GPTQ/AWQ checkpoint (config.json quantization_config): its matrices are read packed. */
  prequantized?: PrequantizedFormat;
  /** MatMulNBits accuracy_level of the quantized products; unset: the serve default (benchmarks vary it). */
  nbitsAccuracyLevel?: number;

  private constructor(byName: Map<string, SafetensorsFile>) {
    this.byName = byName;
  }

  /**
   * The checkpoint's tensors. `widen` makes readStored hand out float32 for 16-bit tensors, so the
   * engine keeps float32 weights (twice the memory, the faster prepacked float32 products).
   */
  static open(dir: string, options: { widen?: boolean; quantization?: QuantOptions } = {}): WeightStore {
    const store = WeightStore.openFiles(dir);
    const format = parsePrequantized(readConfig(dir));
    if (format) store.prequantized = format;
    // Quantizing again what the checkpoint already stores packed (or the few matrices it left as floats)
    // is not what a user of a GPTQ/AWQ checkpoint asks for: refused rather than half applied.
    if (format && options.quantization)
      throw TesseraError.invalidArgument(
        "--quantization",
        `${dir} is already quantized (config.json quantization_config.quant_method ${format.method}): serve it without --quantization`,
      );
    store.widen = options.widen === true;
    if (options.quantization) store.quantization = options.quantization;
    return store;
  }

  private static openFiles(dir: string): WeightStore {
    const index = path.join(dir, "model.safetensors.index.json");
    if (fs.existsSync(index)) return WeightStore.fromIndex(dir, index);
    const files = fs.existsSync(dir) ? fs.readdirSync(dir).filter((f) => f.endsWith(".safetensors")) : [];
    if (files.length === 0) throw new TesseraError(Code.NOT_FOUND, `${dir}: no *.safetensors weights found`);
    const byName = new Map<string, SafetensorsFile>();
    for (const f of files.sort()) {
      const file = SafetensorsFile.open(path.join(dir, f));
      for (const name of file.tensors.keys()) byName.set(name, file);
    }
    return new WeightStore(byName);
  }

  private static fromIndex(dir: string, indexPath: string): WeightStore {
    let weightMap: unknown;
    try {
      weightMap = (JSON.parse(fs.readFileSync(indexPath, "utf8")) as { weight_map?: unknown }).weight_map;
    } catch (err) {
      throw new TesseraError(Code.INVALID_ARGUMENT, `${indexPath} is not valid JSON`, { cause: err });
    }
    if (typeof weightMap !== "object" || weightMap === null) {
      throw new TesseraError(Code.INVALID_ARGUMENT, `${indexPath}: weight_map is missing`);
    }
    const files = new Map<string, SafetensorsFile>();
    const byName = new Map<string, SafetensorsFile>();
    for (const [name, shard] of Object.entries(weightMap as Record<string, unknown>)) {
      if (typeof shard !== "string" || shard.includes("/") || shard.includes("\\")) {
        throw new TesseraError(Code.INVALID_ARGUMENT, `${indexPath}: bad shard name for ${name}`);
      }
      let file = files.get(shard);
      if (!file) {
        file = SafetensorsFile.open(path.join(dir, shard));
        files.set(shard, file);
      }
      if (!file.has(name)) {
        throw new TesseraError(Code.INVALID_ARGUMENT, `${indexPath}: ${name} is not in ${shard}`);
      }
      byName.set(name, file);
    }
    return new WeightStore(byName);
  }

  has(name: string): boolean {
    return this.byName.has(name);
  }

  names(): string[] {
    return [...this.byName.keys()];
  }

  /** The float dtype most weights are stored in (a GPTQ/AWQ checkpoint's int32 codes aside). */
  dtype(): WeightDtype {
    const counts = new Map<WeightDtype, number>();
    for (const [name, file] of this.byName) {
      const d = file.tensors.get(name)!.dtype;
      if (d !== "I32") counts.set(d, (counts.get(d) ?? 0) + 1);
    }
    return [...counts.entries()].sort((a, b) => b[1] - a[1])[0]?.[0] ?? "F32";
  }

  shape(name: string): number[] {
    return this.fileOf(name).tensors.get(name)!.shape;
  }

  /** Reads a tensor as float32 and checks its shape. */
  read(name: string, expectedShape?: number[]): Tensor {
    if (expectedShape) this.checkShape(name, expectedShape);
    return this.fileOf(name).read(name);
  }

  /** Reads one slice of a tensor (a tensor-parallel rank's part) and checks the whole tensor's shape. */
  readSlice(name: string, expectedShape: number[], slice: TensorSlice): Tensor {
    this.checkShape(name, expectedShape);
    return this.fileOf(name).readSlice(name, slice);
  }

  /** Reads a tensor, or one slice of it, in its stored dtype, and checks the whole tensor's shape. */
  readStored(name: string, expectedShape: number[], slice?: TensorSlice): StoredTensor {
    this.checkShape(name, expectedShape);
    const stored = this.fileOf(name).readStored(name, slice);
    if (!this.widen || stored.dtype === "F32") return stored;
    const wide = widened(stored);
    return {
      shape: wide.shape,
      dtype: "F32",
      bytes: new Uint8Array(wide.data.buffer, wide.data.byteOffset, wide.data.byteLength),
    };
  }

  /**
   * A pre-quantized checkpoint's matrix `name` (…proj.weight) [out, in], or `slice` of it, repacked for
   * MatMulNBits (prequantized-repack.ts); undefined when the checkpoint stores that matrix as floats
   * (an lm_head or a module the quantizer left out).
   */
  readPrequantized(name: string, shape: [number, number], slice?: TensorSlice): RepackedMatrix | undefined {
    const f = this.prequantized;
    const base = name.endsWith(".weight") ? name.slice(0, -".weight".length) : name;
    if (!f || !this.has(`${base}.qweight`)) return undefined;
    const [out, inDim] = shape;
    const want = packedShapes(f, out, inDim);
    const ints = (suffix: string, expected: number[]) => {
      this.checkShape(`${base}.${suffix}`, expected);
      return this.fileOf(`${base}.${suffix}`).readInt32(`${base}.${suffix}`).data;
    };
    const gIdx = f.method === "gptq" && this.has(`${base}.g_idx`) ? ints("g_idx", want.gIdx) : undefined;
    const tensors = {
      qweight: ints("qweight", want.qweight),
      qzeros: ints("qzeros", want.qzeros),
      scales: this.read(`${base}.scales`, want.scales).data,
      gIdx,
    };
    return repackPrequantized(base, f, tensors, out, inDim, slice);
  }

  private checkShape(name: string, expectedShape: number[]): void {
    const shape = this.shape(name);
    if (shape.join(",") !== expectedShape.join(",")) {
      throw new TesseraError(
        Code.INVALID_ARGUMENT,
        `weight ${name} has shape [${shape.join(", ")}], expected [${expectedShape.join(", ")}]`,
      );
    }
  }

  private fileOf(name: string): SafetensorsFile {
    const file = this.byName.get(name);
    if (!file) throw new TesseraError(Code.INVALID_ARGUMENT, `checkpoint is missing weight ${name}`);
    return file;
  }
}

/** config.json of a checkpoint folder, for its quantization_config (describeCheckpoint reads the rest). */
function readConfig(dir: string): unknown {
  const file = path.join(dir, "config.json");
  if (!fs.existsSync(file)) return undefined;
  try {
    return JSON.parse(fs.readFileSync(file, "utf8"));
  } catch (err) {
    throw new TesseraError(Code.INVALID_ARGUMENT, `${file} is not valid JSON`, { cause: err });
  }
}
