// What a member other than rank 0 serves, from its member thread: the ShardLink streams its
// lower-ranked peers open, and grpc.health.v1 (NOT_SERVING until the whole group is wired, and again,
// for good, the moment the group fails). It serves nothing else: rank 0 is the replica's one endpoint.
// Served from the member thread so a peer's frame reaches the shard with no hop through another
// thread; a health check waits while a run holds the thread (milliseconds for a decode step).
import { Server, type ServerCredentials } from "@grpc/grpc-js";
import { HealthImplementation, type ServingStatus } from "grpc-health-check";
import { ShardLink } from "../../../proto/gen/tessera/v1/shard_pb.js";
import { bind, servingStatuses } from "../../rpc/grpc-listen.ts";
import { shardLinkHandlers } from "./link-acceptor.ts";
import { LINK_METHOD } from "./link-codec.ts";
import { LINK_CHANNEL_OPTIONS, LINK_RECEIVE_WINDOW } from "./peer-link.ts";
import type { ShardGroup } from "./shard-group.ts";

export interface MemberServer {
  port: number;
  close(): void;
}

export async function startMemberServer(
  group: ShardGroup,
  host: string,
  port: number,
  /** Mutual TLS (services/rpc/tls-credentials.ts); default plaintext. */
  credentials?: ServerCredentials,
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
  // bind() accepts with Nagle's algorithm off: logits and all-reduce parts sent back on an accepted
  // link do not wait for the ACK of the frame before. The receive window is the dialers' (a prefill's
  // hidden states, several MiB on a real model, arrive without waiting for window updates).
  const bound = await bind(server, host, port, {
    flowControlWindow: LINK_RECEIVE_WINDOW,
    ...(credentials && { credentials }),
  });
  return {
    port: bound,
    close: () => {
      setStatus("NOT_SERVING");
      server.forceShutdown();
    },
  };
}
