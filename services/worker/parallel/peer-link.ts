// One persistent ShardLink stream between two members of a group, seen the same way from both ends:
// send a frame, receive frames in order, learn once when the link is gone. The member with the lower
// global rank dials (link-dialer.ts); the other accepts (link-acceptor.ts). Either way the first frame
// each way is a LinkHello.
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import type { ChannelOptions, ClientDuplexStream, ServerDuplexStream } from "@grpc/grpc-js";
import {
  type LinkRequest,
  LinkRequestSchema,
  type LinkResponse,
  LinkResponseSchema,
  type ShardFrame,
  type ShardFrameSchema,
} from "../../../proto/gen/tessera/v1/shard_pb.js";

/** A frame to send: the case and value of ShardFrame.kind (values are init shapes). */
export type OutgoingFrame = Exclude<
  NonNullable<MessageInitShape<typeof ShardFrameSchema>["kind"]>,
  { case: undefined }
>;

/** The receive window of both ends of a link (bytes): a large tensor never waits for window updates halfway. */
export const LINK_RECEIVE_WINDOW = 64 * 1024 * 1024;

/** Channel and server options of every link: unbounded messages (prefill activations are large), keepalive. */
export const LINK_CHANNEL_OPTIONS: ChannelOptions = {
  "grpc.max_receive_message_length": -1,
  "grpc.max_send_message_length": -1,
  "grpc.keepalive_time_ms": 10_000,
  "grpc.keepalive_timeout_ms": 5_000,
  "grpc.keepalive_permit_without_calls": 1,
  // The dialer's receive window (the acceptor's is set where it binds, member-server.ts).
  "grpc-node.flow_control_window": LINK_RECEIVE_WINDOW,
  // While a group forms, peers come up at different times: retry connecting quickly.
  "grpc.initial_reconnect_backoff_ms": 100,
  "grpc.max_reconnect_backoff_ms": 1_000,
};

type Stream =
  | { side: "dialer"; call: ClientDuplexStream<LinkRequest, LinkResponse> }
  | { side: "acceptor"; call: ServerDuplexStream<LinkRequest, LinkResponse> };

export class PeerLink {
  /** Global rank of the member at the other end. */
  readonly peer: number;
  /** Payload bytes sent (tensors and token ids), for the bytes-moved figures. */
  bytesSent = 0;
  private readonly stream: Stream;
  private frameHandler: ((frame: ShardFrame) => void) | undefined;
  /** Frames that came before anyone listened (they may follow the hello in the same read). */
  private early: ShardFrame[] = [];
  private closeHandlers: ((reason: string) => void)[] = [];
  private closedReason: string | undefined;

  constructor(peer: number, stream: Stream) {
    this.peer = peer;
    this.stream = stream;
    const { call } = stream;
    call.on("data", (m: LinkRequest | LinkResponse) => {
      if (!m.frame) return;
      if (this.frameHandler) this.frameHandler(m.frame);
      else this.early.push(m.frame);
    });
    call.on("error", (err: Error) => this.closed(`link to member ${peer} failed: ${err.message}`));
    call.on("end", () => this.closed(`member ${peer} ended the link`));
    call.on("close", () => this.closed(`link to member ${peer} closed`));
    if (stream.side === "acceptor")
      stream.call.on("cancelled", () => this.closed(`member ${peer} went away`));
  }

  get isClosed(): boolean {
    return this.closedReason !== undefined;
  }

  /** Receives every frame after the hello, in order. */
  onFrame(handler: (frame: ShardFrame) => void): void {
    this.frameHandler = handler;
    const early = this.early;
    this.early = [];
    for (const frame of early) handler(frame);
  }

  /** Called once when the link is gone (at once if it already is). */
  onClose(handler: (reason: string) => void): void {
    if (this.closedReason !== undefined) handler(this.closedReason);
    else this.closeHandlers.push(handler);
  }

  send(kind: OutgoingFrame, payloadBytes = 0): void {
    if (this.closedReason !== undefined) return;
    this.bytesSent += payloadBytes;
    const frame = { kind };
    if (this.stream.side === "dialer") this.stream.call.write(create(LinkRequestSchema, { frame }));
    else this.stream.call.write(create(LinkResponseSchema, { frame }));
  }

  /** Ends the link on purpose (shutdown); the peer sees it end. */
  close(): void {
    const { stream } = this;
    if (stream.side === "dialer") {
      // End first so the frames written before (a failure's reason) go out; cancel if the peer lingers.
      stream.call.end();
      setTimeout(() => stream.call.cancel(), 1_000).unref();
    } else if (!stream.call.writableEnded) stream.call.end();
    this.closed("closed by this member");
  }

  private closed(reason: string): void {
    if (this.closedReason !== undefined) return;
    this.closedReason = reason;
    for (const h of this.closeHandlers) h(reason);
    this.closeHandlers = [];
  }
}
