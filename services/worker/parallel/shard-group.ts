// A member's view of its parallel group: the links to its peers (group-layout.ts says which), forming
// the group, and failing it. Formation: each member accepts links from lower ranks and dials higher
// ones; once all its links are up it tells rank 0 (MemberReady); when every member has, rank 0 tells
// everyone (GroupReady) and the group serves. Failure is fail-fast and final: a link that ends, a peer
// that gives up, a shard that fails or formation past its deadline fails the group, which tells every
// peer it can still reach and closes its links, so the failure spreads to every member at once. A
// failed group never serves again; its pods exit and Kubernetes restarts them into a new group.
// A group of one (a single process) has no links: it forms as soon as it starts.

import type { LinkHello, MemberReady, ShardFrame } from "../../../proto/gen/tessera/v1/shard_pb.js";
import { Code, TesseraError } from "../../kernel/errors.ts";
import type { Logger } from "../../kernel/log.ts";
import type { ClientSecurity } from "../../rpc/grpc-client.ts";
import { COORDINATOR, dialedPeers, type GroupLayout, groupSize, linkPeers } from "./group-layout.ts";
import type { Acceptor } from "./link-acceptor.ts";
import type { PeerResolver } from "./peer-hosts.ts";
import type { OutgoingFrame, PeerLink } from "./peer-link.ts";

export interface ShardGroupOptions {
  layout: GroupLayout;
  self: number;
  /** host:port of every member, by global rank. */
  peers: readonly string[];
  /** Resolves a peer's address before each dial attempt (default: DNS, by grpc-js). */
  resolve?: PeerResolver;
  /** How links are dialled: mutual TLS or (default) plaintext. */
  security?: ClientSecurity;
  /** What every member must agree on (see groupKey in shard-spec.ts). */
  groupKey: string;
  /** This member's decoder layers, reported to rank 0. */
  layers: { start: number; end: number };
  formationTimeoutMs: number;
  log: Logger;
  /** Counts the payload bytes of every frame sent. */
  onSent?: (kind: string, bytes: number) => void;
}

export type FrameHandler = (from: number, frame: ShardFrame) => void;

type State = "forming" | "ready" | "failed" | "closed";

export class ShardGroup implements Acceptor {
  readonly self: number;
  readonly groupKey: string;
  readonly layout: GroupLayout;
  private readonly o: ShardGroupOptions;
  private readonly links = new Map<number, PeerLink>();
  private readonly expected: number[];
  private readonly reports = new Map<number, MemberReady>();
  private readonly abort = new AbortController();
  private handler: FrameHandler = () => {};
  private state: State = "forming";
  private failure: TesseraError | undefined;
  private timer: NodeJS.Timeout | undefined;
  private readonly settle: { ready(): void; fail(err: TesseraError): void };
  private readonly failedWith: (err: TesseraError) => void;
  /** Resolves once the whole group is wired; rejects if it fails first. */
  readonly ready: Promise<void>;
  /** Resolves with the reason when the group fails. */
  readonly failed: Promise<TesseraError>;

  constructor(options: ShardGroupOptions) {
    this.o = options;
    this.self = options.self;
    this.groupKey = options.groupKey;
    this.layout = options.layout;
    this.expected = linkPeers(options.layout, options.self);
    let settle!: ShardGroup["settle"];
    this.ready = new Promise<void>((resolve, reject) => {
      settle = { ready: resolve, fail: reject };
    });
    this.ready.catch(() => {});
    this.settle = settle;
    let failedWith!: (err: TesseraError) => void;
    this.failed = new Promise((resolve) => {
      failedWith = resolve;
    });
    this.failedWith = failedWith;
  }

  /** Dials the higher-ranked peers and arms the formation deadline. */
  start(): void {
    const { o } = this;
    this.timer = setTimeout(
      () => this.fail(`the group did not form within ${o.formationTimeoutMs} ms`),
      o.formationTimeoutMs,
    );
    const deadline = Date.now() + o.formationTimeoutMs;
    for (const peer of dialedPeers(o.layout, o.self)) {
      const address = o.peers[peer]!;
      // The dialer (grpc-js, the tracing exporter) is loaded only by a member with peers to dial: a
      // single process's model thread has none, and its heap stays without them (issue 18).
      import("./link-dialer.ts")
        .then(({ dialLink }) =>
          dialLink({
            address,
            self: o.self,
            peer,
            groupKey: o.groupKey,
            deadline,
            signal: this.abort.signal,
            ...(o.resolve && { resolve: o.resolve }),
            ...(o.security && { security: o.security }),
          }),
        )
        .then(
          (link) => this.add(link),
          (err: unknown) => this.fail(TesseraError.from(err).message),
        );
    }
    if (this.expected.length === 0) this.linked();
  }

  get isServing(): boolean {
    return this.state === "ready";
  }

  get error(): TesseraError | undefined {
    return this.failure;
  }

  /** What each member reported when it joined (rank 0 only), by global rank. */
  get members(): ReadonlyMap<number, MemberReady> {
    return this.reports;
  }

  /** Receives the frames that are not about the group itself (steps, all-reduce parts, logits, KV). */
  onFrame(handler: FrameHandler): void {
    this.handler = handler;
  }

  send(to: number, frame: OutgoingFrame, payloadBytes = 0): void {
    const link = this.links.get(to);
    if (!link) {
      this.fail(`no link to member ${to}`);
      return;
    }
    if (payloadBytes > 0) this.o.onSent?.(frame.case, payloadBytes);
    link.send(frame, payloadBytes);
  }

  refusal(hello: LinkHello): string | undefined {
    if (this.state !== "forming") return `member ${this.self}'s group is ${this.state}`;
    if (hello.fromRank >= this.self || !this.expected.includes(hello.fromRank))
      return `member ${this.self} takes no link from member ${hello.fromRank}`;
    if (this.links.has(hello.fromRank)) return `member ${hello.fromRank} is already linked`;
    return undefined;
  }

  accepted(link: PeerLink): void {
    this.add(link);
  }

  private add(link: PeerLink): void {
    if (this.state !== "forming") {
      link.close();
      return;
    }
    this.links.set(link.peer, link);
    link.onFrame((frame) => this.dispatch(link.peer, frame));
    link.onClose((reason) => this.fail(reason));
    if (this.expected.every((p) => this.links.has(p))) this.linked();
  }

  /** Every link of this member is up. */
  private linked(): void {
    const { start, end } = this.o.layers;
    const report = { rank: this.self, layerStart: start, layerEnd: end };
    if (this.self === COORDINATOR) this.memberReady(report as MemberReady);
    else this.send(COORDINATOR, { case: "memberReady", value: report });
  }

  private memberReady(report: MemberReady): void {
    this.reports.set(report.rank, report);
    if (this.reports.size < groupSize(this.layout)) return;
    for (const peer of this.expected) this.send(peer, { case: "groupReady", value: {} });
    this.becomeReady();
  }

  private becomeReady(): void {
    if (this.state !== "forming") return;
    this.state = "ready";
    clearTimeout(this.timer);
    // A group of one (a single process) forms at once, with nothing to report.
    if (groupSize(this.layout) > 1)
      this.o.log.info({ member: this.self, links: this.expected }, "parallel group formed");
    this.settle.ready();
  }

  private dispatch(from: number, frame: ShardFrame): void {
    switch (frame.kind.case) {
      case "memberReady":
        if (this.self === COORDINATOR) this.memberReady(frame.kind.value);
        return;
      case "groupReady":
        this.becomeReady();
        return;
      case "failure":
        this.fail(`member ${from} gave up: ${frame.kind.value.reason}`);
        return;
      default:
        this.handler(from, frame);
    }
  }

  /** Fails the group (once): tells the peers, closes every link, and stops serving for good. */
  fail(reason: string): void {
    if (this.state === "failed" || this.state === "closed") return;
    this.state = "failed";
    this.failure = new TesseraError(Code.UNAVAILABLE, `parallel group failed: ${reason}`);
    this.o.log.error({ member: this.self, reason }, "parallel group failed");
    this.shutLinks(reason);
    this.settle.fail(this.failure);
    this.failedWith(this.failure);
  }

  /** Leaves the group on purpose (shutdown); the peers see it go and fail. */
  close(): void {
    if (this.state === "failed" || this.state === "closed") return;
    this.state = "closed";
    this.shutLinks(`member ${this.self} is shutting down`);
    this.settle.fail(new TesseraError(Code.UNAVAILABLE, "the parallel group was closed"));
  }

  private shutLinks(reason: string): void {
    clearTimeout(this.timer);
    this.abort.abort();
    for (const link of this.links.values()) {
      link.send({ case: "failure", value: { reason } });
      link.close();
    }
  }
}
