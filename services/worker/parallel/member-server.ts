// What a member other than rank 0 serves, from its member thread: the ShardLink streams its
// lower-ranked peers open, and grpc.health.v1 (NOT_SERVING until the whole group is wired, and again,
// for good, the moment the group fails). It serves nothing else: rank 0 is the replica's one endpoint.
// Served from the member thread so a peer's frame reaches the shard with no hop through another
// thread; a health check waits while a run holds the thread (milliseconds for a decode step).
import http2 from "node:http2";
import { Server } from "@grpc/grpc-js";
import { HealthImplementation, type ServingStatus } from "grpc-health-check";
import { ShardLink } from "../../../proto/gen/tessera/v1/shard_pb.js";
import { bind, servingStatuses } from "../server/grpc-listen.ts";
import { shardLinkHandlers } from "./link-acceptor.ts";
import { LINK_METHOD } from "./link-codec.ts";
import { LINK_CHANNEL_OPTIONS } from "./peer-link.ts";
import type { ShardGroup } from "./shard-group.ts";

export interface MemberServer {
  port: number;
  close(): void;
}

export async function startMemberServer(
  group: ShardGroup,
  host: string,
  port: number,
): Promise<MemberServer> {
  const server = new Server(LINK_CHANNEL_OPTIONS);
  server.addService({ link: LINK_METHOD }, shardLinkHandlers(group));
  const health = new HealthImplementation(servingStatuses("NOT_SERVING", ShardLink.typeName));
  health.addToServer(server);
  const setStatus = (status: ServingStatus) => {
    for (const [service, s] of Object.entries(servingStatuses(status, ShardLink.typeName)))
      health.setStatus(service, s);
  };
  group.ready.then(
    () => setStatus("SERVING"),
    () => {},
  );
  group.failed.then(() => setStatus("NOT_SERVING"));
  const bound = await bindWithoutNagle(server, host, port);
  return {
    port: bound,
    close: () => {
      setStatus("NOT_SERVING");
      server.forceShutdown();
    },
  };
}

/**
 * Binds with Nagle's algorithm off on the sockets the server accepts. grpc-js turns it off on the
 * sockets it dials but has no option for those it accepts, so a frame a member sends back on an
 * accepted link (logits to rank 0, an all-reduce part to a lower rank) could wait for the peer's ACK of
 * the one before. The http2 server grpc-js creates while binding gets `noDelay` (a net.Server option);
 * this thread's http2 module is its own, and is restored once bound.
 */
async function bindWithoutNagle(server: Server, host: string, port: number): Promise<number> {
  const module = http2 as { createServer: typeof http2.createServer };
  const create = module.createServer;
  module.createServer = ((options: http2.ServerOptions) =>
    create({ ...options, noDelay: true } as http2.ServerOptions)) as typeof http2.createServer;
  try {
    return await bind(server, host, port);
  } finally {
    module.createServer = create;
  }
}
