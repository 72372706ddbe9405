// Opens a link to a member with a higher global rank: waits for its server (it may still be loading its
// shard), opens the ShardLink stream, says hello and waits for its hello. A peer that is not up yet is
// retried until the group's formation deadline, its name resolved again at each attempt (peer-hosts.ts:
// a replaced pod has a new IP); a peer that refuses the group (another model, pool or layout) is an
// error at once.
import { setTimeout as delay } from "node:timers/promises";
import { create } from "@bufbuild/protobuf";
import { Client, Metadata, type ServiceError, status } from "@grpc/grpc-js";
import {
  type LinkHello,
  type LinkRequest,
  LinkRequestSchema,
  type LinkResponse,
} from "../../../proto/gen/tessera/v1/shard_pb.js";
import { Code, TesseraError } from "../../kernel/errors.ts";
import { type ClientSecurity, PLAINTEXT } from "../../rpc/grpc-client.ts";
import { LINK_METHOD } from "./link-codec.ts";
import type { PeerResolver } from "./peer-hosts.ts";
import { LINK_CHANNEL_OPTIONS, PeerLink } from "./peer-link.ts";

export interface DialOptions {
  address: string;
  self: number;
  peer: number;
  groupKey: string;
  /** Epoch ms after which dialing gives up. */
  deadline: number;
  signal?: AbortSignal;
  /** Resolves the address before each attempt (default: as it is, grpc-js resolves names by DNS). */
  resolve?: PeerResolver;
  /** Mutual TLS (tls-credentials.ts); default plaintext. */
  security?: ClientSecurity;
}

export async function dialLink(o: DialOptions): Promise<PeerLink> {
  let client: Client | undefined;
  let target = "";
  let last = "not tried";
  for (let attempt = 0; Date.now() < o.deadline; attempt++) {
    if (o.signal?.aborted) break;
    try {
      const resolved = o.resolve ? await o.resolve(o.address) : o.address;
      if (!client || resolved !== target) {
        client?.close();
        target = resolved;
        const security = o.security ?? PLAINTEXT;
        client = new Client(target, security.credentials, { ...LINK_CHANNEL_OPTIONS, ...security.options });
      }
      await waitForReady(client, Math.min(o.deadline, Date.now() + 2_000));
      return await handshake(client, o);
    } catch (err) {
      if (err instanceof TesseraError) {
        client?.close();
        throw err;
      }
      last = (err as Error).message;
      await delay(Math.min(1_000, 50 * 2 ** attempt), undefined, { signal: o.signal }).catch(() => {});
    }
  }
  client?.close();
  const at = target && target !== o.address ? `${o.address} (${target})` : o.address;
  throw new TesseraError(Code.UNAVAILABLE, `cannot link to member ${o.peer} at ${at}: ${last}`);
}

function waitForReady(client: Client, deadline: number): Promise<void> {
  return new Promise((resolve, reject) =>
    client.waitForReady(deadline, (err) => (err ? reject(err) : resolve())),
  );
}

/** Says hello; resolves with the link once the peer's hello checks out. Retryable failures reject with a plain Error. */
function handshake(client: Client, o: DialOptions): Promise<PeerLink> {
  const call = client.makeBidiStreamRequest<LinkRequest, LinkResponse>(
    LINK_METHOD.path,
    LINK_METHOD.requestSerialize,
    LINK_METHOD.responseDeserialize,
    new Metadata(),
  );
  return new Promise((resolve, reject) => {
    const onError = (err: ServiceError) => {
      call.off("data", onData);
      if (err.code === status.FAILED_PRECONDITION || err.code === status.INVALID_ARGUMENT)
        reject(
          new TesseraError(Code.FAILED_PRECONDITION, `member ${o.peer} refused the link: ${err.details}`),
        );
      else reject(new Error(err.details || err.message));
    };
    const onData = (m: LinkResponse) => {
      call.off("data", onData);
      call.off("error", onError);
      const hello = m.frame?.kind.case === "hello" ? (m.frame.kind.value as LinkHello) : undefined;
      if (!hello || hello.fromRank !== o.peer || hello.toRank !== o.self || hello.groupKey !== o.groupKey) {
        call.cancel();
        reject(
          new TesseraError(
            Code.FAILED_PRECONDITION,
            `member ${o.peer} at ${o.address} answered as another group member`,
          ),
        );
        return;
      }
      resolve(new PeerLink(o.peer, { side: "dialer", call }));
    };
    call.on("data", onData);
    call.on("error", onError);
    call.write(
      create(LinkRequestSchema, {
        frame: { kind: { case: "hello", value: { fromRank: o.self, toRank: o.peer, groupKey: o.groupKey } } },
      }),
    );
  });
}
