// A small builder for ONNX graphs: Tessera writes each model's graph itself from its weights, so no
// export step (and no Python) is needed. Messages are the generated ones of proto/onnx/onnx.proto.
import { create, toBinary } from "@bufbuild/protobuf";
import {
  type AttributeProto,
  AttributeProtoSchema,
  AttributeProto_AttributeType as AttrType,
  TensorProto_DataType as DataType,
  ModelProtoSchema,
  type NodeProto,
  NodeProtoSchema,
  type TensorProto,
  TensorProtoSchema,
  type ValueInfoProto,
  ValueInfoProtoSchema,
} from "../../../proto/gen/onnx/onnx_pb.js";
import type { WeightDtype } from "../model/dtype.ts";

export type ElemType = "float" | "int64" | "int32";

/** An attribute value: an integer, integers, a string, or a float wrapped as {float}. */
export type Attr = number | number[] | string | { float: number };

export const OPSET = 17;
export const MS_DOMAIN = "com.microsoft";

const STORED: Record<WeightDtype, DataType> = {
  F32: DataType.FLOAT,
  F16: DataType.FLOAT16,
  BF16: DataType.BFLOAT16,
};

const ELEM: Record<ElemType, DataType> = {
  float: DataType.FLOAT,
  int64: DataType.INT64,
  int32: DataType.INT32,
};

export class GraphBuilder {
  private readonly nodes: NodeProto[] = [];
  private readonly initializers: TensorProto[] = [];
  private readonly inputs: ValueInfoProto[] = [];
  private readonly outputs: ValueInfoProto[] = [];
  private readonly usedNames = new Set<string>();
  private usesMsDomain = false;
  private counter = 0;

  /** A graph input; dims are numbers (fixed) or names (symbolic). Declaring a name again returns it. */
  input(name: string, elem: ElemType, dims: (number | string)[]): string {
    if (this.inputs.some((i) => i.name === name)) return name;
    this.inputs.push(valueInfo(name, elem, dims));
    return name;
  }

  /** Marks an existing value as a graph output (through Identity when the name differs). */
  output(value: string, name: string, elem: ElemType, dims: (number | string)[]): void {
    if (value !== name) this.nodes.push(node("Identity", [value], [name], {}, ""));
    this.outputs.push(valueInfo(name, elem, dims));
  }

  /** A float32 constant stored in the model (weights). */
  weight(name: string, data: Float32Array, dims: number[]): string {
    const rawData = new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
    this.initializers.push(tensor(name, DataType.FLOAT, dims, rawData));
    return name;
  }

  /** A constant in a checkpoint dtype, from its little-endian bytes (16-bit weights kept as stored). */
  storedWeight(name: string, dtype: WeightDtype, bytes: Uint8Array, dims: number[]): string {
    this.initializers.push(tensor(name, STORED[dtype], dims, bytes));
    return name;
  }

  /** A uint8 constant (packed quantized weights, zero points). */
  uint8Weight(name: string, bytes: Uint8Array, dims: number[]): string {
    this.initializers.push(tensor(name, DataType.UINT8, dims, bytes));
    return name;
  }

  /** An int8 constant (per-channel quantized codes, their zero points). */
  int8Weight(name: string, codes: Int8Array, dims: number[]): string {
    const rawData = new Uint8Array(codes.buffer, codes.byteOffset, codes.byteLength);
    this.initializers.push(tensor(name, DataType.INT8, dims, rawData));
    return name;
  }

  /** An int64 constant (shapes, axes, indices). */
  ints(values: number[], dims: number[] = [values.length]): string {
    const name = this.fresh("const_i64");
    const data = BigInt64Array.from(values.map(BigInt));
    const rawData = new Uint8Array(data.buffer);
    this.initializers.push(tensor(name, DataType.INT64, dims, rawData));
    return name;
  }

  /** A float scalar constant. */
  scalar(value: number): string {
    return this.weight(this.fresh("const_f32"), Float32Array.of(value), []);
  }

  /** A float constant of shape `dims`, every element `value`. */
  filled(value: number, dims: number[]): string {
    const count = dims.reduce((n, d) => n * d, 1);
    return this.weight(this.fresh("const_f32"), new Float32Array(count).fill(value), dims);
  }

  /** Adds a node with one output and returns the output's name. */
  op(opType: string, inputs: string[], attrs: Record<string, Attr> = {}, domain = ""): string {
    return this.opN(opType, inputs, 1, attrs, domain)[0]!;
  }

  /** Adds a node with `count` outputs. */
  opN(
    opType: string,
    inputs: string[],
    count: number,
    attrs: Record<string, Attr> = {},
    domain = "",
  ): string[] {
    const outs = Array.from({ length: count }, () => this.fresh(opType.toLowerCase()));
    if (domain === MS_DOMAIN) this.usesMsDomain = true;
    this.nodes.push(node(opType, inputs, outs, attrs, domain));
    return outs;
  }

  toBytes(graphName: string): Uint8Array {
    const opsetImport = [{ domain: "", version: BigInt(OPSET) }];
    if (this.usesMsDomain) opsetImport.push({ domain: MS_DOMAIN, version: 1n });
    const model = create(ModelProtoSchema, {
      irVersion: 8n,
      producerName: "tessera",
      opsetImport,
      graph: {
        name: graphName,
        node: this.nodes,
        initializer: this.initializers,
        input: this.inputs,
        output: this.outputs,
      },
    });
    return toBinary(ModelProtoSchema, model);
  }

  private fresh(prefix: string): string {
    let name: string;
    do name = `${prefix}_${this.counter++}`;
    while (this.usedNames.has(name));
    this.usedNames.add(name);
    return name;
  }
}

function tensor(name: string, dataType: DataType, dims: number[], rawData: Uint8Array): TensorProto {
  return create(TensorProtoSchema, { name, dataType, dims: dims.map(BigInt), rawData });
}

function valueInfo(name: string, elem: ElemType, dims: (number | string)[]): ValueInfoProto {
  const dim = dims.map((d) => ({
    value:
      typeof d === "number"
        ? { case: "dimValue" as const, value: BigInt(d) }
        : { case: "dimParam" as const, value: d },
  }));
  return create(ValueInfoProtoSchema, {
    name,
    type: { value: { case: "tensorType", value: { elemType: ELEM[elem], shape: { dim } } } },
  });
}

function node(
  opType: string,
  input: string[],
  output: string[],
  attrs: Record<string, Attr>,
  domain: string,
): NodeProto {
  const attribute = Object.entries(attrs).map(([name, value]) => attr(name, value));
  return create(NodeProtoSchema, { opType, input, output, name: output[0] ?? opType, domain, attribute });
}

function attr(name: string, value: Attr): AttributeProto {
  if (typeof value === "number")
    return create(AttributeProtoSchema, { name, type: AttrType.INT, i: BigInt(value) });
  if (Array.isArray(value))
    return create(AttributeProtoSchema, { name, type: AttrType.INTS, ints: value.map(BigInt) });
  if (typeof value === "string") {
    return create(AttributeProtoSchema, { name, type: AttrType.STRING, s: new TextEncoder().encode(value) });
  }
  return create(AttributeProtoSchema, { name, type: AttrType.FLOAT, f: value.float });
}
