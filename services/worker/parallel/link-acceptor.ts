// The server side of ShardLink: a member accepts the links its lower-ranked peers open. The first frame
// must be a hello naming this member and the group; the group decides whether it expects that peer.
import { create } from "@bufbuild/protobuf";
import { type ServerDuplexStream, status } from "@grpc/grpc-js";
import {
  type LinkHello,
  type LinkRequest,
  type LinkResponse,
  LinkResponseSchema,
  type ShardLink,
} from "../../../proto/gen/tessera/v1/shard_pb.js";
import type { GrpcHandlers } from "../../rpc/grpc-service.ts";
import { PeerLink } from "./peer-link.ts";

type ShardLinkMethods = typeof ShardLink extends { method: infer M } ? M : never;

export interface Acceptor {
  readonly self: number;
  readonly groupKey: string;
  /** Why a link from this hello is refused, or undefined to accept it. */
  refusal(hello: LinkHello): string | undefined;
  /** Takes an accepted link. */
  accepted(link: PeerLink): void;
}

export function shardLinkHandlers(acceptor: Acceptor): GrpcHandlers<ShardLinkMethods> {
  return { link: (call) => accept(acceptor, call) };
}

function accept(acceptor: Acceptor, call: ServerDuplexStream<LinkRequest, LinkResponse>): void {
  const refuse = (code: status, details: string) => {
    if (!call.writableEnded) call.emit("error", { code, details });
  };
  const onData = (m: LinkRequest) => {
    call.off("data", onData);
    const hello = m.frame?.kind.case === "hello" ? m.frame.kind.value : undefined;
    if (!hello) return refuse(status.INVALID_ARGUMENT, "the first frame of a link must be a hello");
    if (hello.toRank !== acceptor.self)
      return refuse(status.FAILED_PRECONDITION, `this is member ${acceptor.self}, not ${hello.toRank}`);
    if (hello.groupKey !== acceptor.groupKey)
      return refuse(
        status.FAILED_PRECONDITION,
        `group mismatch: member ${hello.fromRank} has ${hello.groupKey}, member ${acceptor.self} has ${acceptor.groupKey}`,
      );
    const refusal = acceptor.refusal(hello);
    if (refusal) return refuse(status.FAILED_PRECONDITION, refusal);
    const link = new PeerLink(hello.fromRank, { side: "acceptor", call });
    call.write(
      create(LinkResponseSchema, {
        frame: {
          kind: {
            case: "hello",
            value: { fromRank: acceptor.self, toRank: hello.fromRank, groupKey: acceptor.groupKey },
          },
        },
      }),
    );
    acceptor.accepted(link);
  };
  call.on("data", onData);
  call.on("error", () => {});
}
