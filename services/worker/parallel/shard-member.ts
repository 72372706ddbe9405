// A member of a parallel replica other than rank 0, as its process runs it: the member thread loads
// the shard and serves the internal ShardLink streams and grpc.health.v1 on `port`; the event loop
// only learns when the group is ready or gone, and closes it on shutdown.
import type { Logger } from "../../kernel/log.ts";
import type { AttentionBackendName } from "../graph/attention-backend.ts";
import type { QuantOptions } from "../model/quantize-blocks.ts";
import { MemberHandle } from "./member-handle.ts";
import type { ShardPlacement } from "./shard-placement.ts";

export interface ShardMemberOptions {
  modelDir: string;
  architectureOverride: string | undefined;
  /** Keep 16-bit weights as float32 in memory (`--dtype float32`). */
  widenWeights?: boolean;
  /** `--quantization`: projection matrices kept quantized (block-wise or per channel). */
  quantization?: QuantOptions;
  threads: number;
  numBlocks: number;
  blockSize: number;
  attention: AttentionBackendName | "auto";
  placement: ShardPlacement;
  host: string;
  /** 0 picks a free port (read it back from `port`). */
  port: number;
  log: Logger;
}

export class ShardMember {
  readonly port: number;
  readonly member: MemberHandle;

  private constructor(port: number, member: MemberHandle) {
    this.port = port;
    this.member = member;
  }

  /** Resolves once the shard is loaded and its links and health are served. */
  static async start(o: ShardMemberOptions): Promise<ShardMember> {
    const member = new MemberHandle({
      modelDir: o.modelDir,
      architectureOverride: o.architectureOverride,
      ...(o.widenWeights && { widenWeights: true }),
      ...(o.quantization && { quantization: o.quantization }),
      threads: o.threads,
      numBlocks: o.numBlocks,
      blockSize: o.blockSize,
      attention: o.attention,
      placement: o.placement,
      listen: { host: o.host, port: o.port },
      logLevel: o.log.level,
    });
    try {
      return new ShardMember(await member.listening, member);
    } catch (err) {
      await member.close();
      throw err;
    }
  }

  /** Leaves the group (the others fail), stops serving and unloads the shard. */
  close(): Promise<void> {
    return this.member.close();
  }
}
