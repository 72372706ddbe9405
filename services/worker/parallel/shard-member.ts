// A member of a parallel replica other than rank 0: it loads its shard, serves only the internal
// ShardLink streams and grpc.health.v1 (NOT_SERVING until the whole group is wired, and again, for
// good, the moment the group fails), and runs whatever steps rank 0 drives through it.
import { Server, ServerCredentials } from "@grpc/grpc-js";
import { HealthImplementation, type ServingStatus } from "grpc-health-check";
import { ShardLink } from "../../../proto/gen/tessera/v1/shard_pb.js";
import { Code, TesseraError } from "../../common/errors.ts";
import type { Logger } from "../../common/log.ts";
import type { AttentionBackendName } from "../graph/attention-backend.ts";
import { describeCheckpoint } from "../model/checkpoint.ts";
import { ShardWorker } from "../runtime/shard-worker.ts";
import { grpcServiceDefinition } from "../server/grpc-service.ts";
import { shardLinkHandlers } from "./link-acceptor.ts";
import { LINK_CHANNEL_OPTIONS } from "./peer-link.ts";
import { ShardGroup } from "./shard-group.ts";
import { groupKey, layoutOf, type ShardPlacement, selfRank, shardSpec } from "./shard-placement.ts";
import { StageWorker } from "./stage-worker.ts";

export interface ShardMemberOptions {
  modelDir: string;
  architectureOverride: string | undefined;
  threads: number;
  numBlocks: number;
  blockSize: number;
  attention: AttentionBackendName | "auto";
  placement: ShardPlacement;
  host: string;
  /** 0 picks a free port (read it back from `port`); the peers list must then be written after. */
  port: number;
  log: Logger;
}

export class ShardMember {
  readonly port: number;
  readonly group: ShardGroup;
  private readonly server: Server;
  private readonly health: HealthImplementation;
  private readonly worker: ShardWorker;

  private constructor(parts: {
    port: number;
    group: ShardGroup;
    server: Server;
    health: HealthImplementation;
    worker: ShardWorker;
  }) {
    this.port = parts.port;
    this.group = parts.group;
    this.server = parts.server;
    this.health = parts.health;
    this.worker = parts.worker;
  }

  static async start(o: ShardMemberOptions): Promise<ShardMember> {
    const checkpoint = describeCheckpoint(o.modelDir, o.architectureOverride);
    const spec = shardSpec(o.placement, checkpoint.config.numLayers);
    const worker = await ShardWorker.start({ ...o, spec });
    const group = new ShardGroup({
      layout: layoutOf(o.placement),
      self: selfRank(o.placement),
      peers: o.placement.peers,
      groupKey: groupKey(o.placement, checkpoint.revision, o),
      layers: spec.layers,
      formationTimeoutMs: o.placement.formationTimeoutMs,
      log: o.log,
    });
    new StageWorker({ group, worker });
    const server = new Server(LINK_CHANNEL_OPTIONS);
    server.addService(grpcServiceDefinition(ShardLink), shardLinkHandlers(group));
    const health = new HealthImplementation(statuses("NOT_SERVING"));
    health.addToServer(server);
    let port: number;
    try {
      port = await bind(server, o.host, o.port);
    } catch (err) {
      await worker.close();
      throw err;
    }
    const member = new ShardMember({ port, group, server, health, worker });
    group.ready.then(
      () => member.setStatus("SERVING"),
      () => {},
    );
    group.failed.then(() => member.setStatus("NOT_SERVING"));
    group.start();
    return member;
  }

  private setStatus(status: ServingStatus): void {
    for (const [service, s] of Object.entries(statuses(status))) this.health.setStatus(service, s);
  }

  /** Leaves the group (the others fail), stops serving and unloads the shard. */
  async close(): Promise<void> {
    this.setStatus("NOT_SERVING");
    this.group.close();
    this.server.forceShutdown();
    await this.worker.close();
  }
}

function statuses(status: ServingStatus): Record<string, ServingStatus> {
  return { "": status, [ShardLink.typeName]: status };
}

function bind(server: Server, host: string, port: number): Promise<number> {
  const address = host.includes(":") ? `[${host}]:${port}` : `${host}:${port}`;
  return new Promise((resolve, reject) => {
    server.bindAsync(address, ServerCredentials.createInsecure(), (err, bound) => {
      if (err)
        reject(
          new TesseraError(Code.UNAVAILABLE, `cannot listen on ${address}: ${err.message}`, { cause: err }),
        );
      else resolve(bound);
    });
  });
}
