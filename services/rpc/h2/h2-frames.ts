// HTTP/2 frames (RFC 9113 section 4 and 6): the header every frame starts with, the frame types and
// flags the server uses, error codes, and SETTINGS. Used by h2-connection.ts.

export const PREFACE = Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", "latin1");
export const FRAME_HEADER_BYTES = 9;

export const FrameType = {
  DATA: 0x0,
  HEADERS: 0x1,
  PRIORITY: 0x2,
  RST_STREAM: 0x3,
  SETTINGS: 0x4,
  PUSH_PROMISE: 0x5,
  PING: 0x6,
  GOAWAY: 0x7,
  WINDOW_UPDATE: 0x8,
  CONTINUATION: 0x9,
} as const;

export const Flag = {
  END_STREAM: 0x1,
  ACK: 0x1,
  END_HEADERS: 0x4,
  PADDED: 0x8,
  PRIORITY: 0x20,
} as const;

export const ErrorCode = {
  NO_ERROR: 0x0,
  PROTOCOL_ERROR: 0x1,
  INTERNAL_ERROR: 0x2,
  FLOW_CONTROL_ERROR: 0x3,
  STREAM_CLOSED: 0x5,
  FRAME_SIZE_ERROR: 0x6,
  REFUSED_STREAM: 0x7,
  CANCEL: 0x8,
  COMPRESSION_ERROR: 0x9,
} as const;

export const Setting = {
  HEADER_TABLE_SIZE: 0x1,
  ENABLE_PUSH: 0x2,
  MAX_CONCURRENT_STREAMS: 0x3,
  INITIAL_WINDOW_SIZE: 0x4,
  MAX_FRAME_SIZE: 0x5,
  MAX_HEADER_LIST_SIZE: 0x6,
} as const;

/** The initial flow-control window of a stream and of a connection (RFC 9113 6.9.2). */
export const DEFAULT_WINDOW = 65_535;
export const MAX_WINDOW = 2 ** 31 - 1;
/** The smallest and largest frame payload a peer may allow (SETTINGS_MAX_FRAME_SIZE). */
export const MIN_FRAME_SIZE = 16_384;
export const MAX_FRAME_SIZE = 2 ** 24 - 1;

/** A frame with its payload, as one buffer. */
export function frame(type: number, flags: number, streamId: number, payload?: Uint8Array): Buffer {
  const length = payload?.byteLength ?? 0;
  const out = Buffer.allocUnsafe(FRAME_HEADER_BYTES + length);
  writeFrameHeader(out, 0, length, type, flags, streamId);
  if (payload) out.set(payload, FRAME_HEADER_BYTES);
  return out;
}

export function writeFrameHeader(
  out: Buffer,
  at: number,
  length: number,
  type: number,
  flags: number,
  streamId: number,
): void {
  out[at] = length >>> 16;
  out[at + 1] = (length >>> 8) & 0xff;
  out[at + 2] = length & 0xff;
  out[at + 3] = type;
  out[at + 4] = flags;
  out.writeUInt32BE(streamId & 0x7fffffff, at + 5);
}

/** A SETTINGS frame carrying `values` (identifier -> value). */
export function settingsFrame(values: ReadonlyMap<number, number>): Buffer {
  const payload = Buffer.allocUnsafe(values.size * 6);
  let at = 0;
  for (const [id, value] of values) {
    payload.writeUInt16BE(id, at);
    payload.writeUInt32BE(value, at + 2);
    at += 6;
  }
  return frame(FrameType.SETTINGS, 0, 0, payload);
}

export function windowUpdateFrame(streamId: number, increment: number): Buffer {
  const payload = Buffer.allocUnsafe(4);
  payload.writeUInt32BE(increment, 0);
  return frame(FrameType.WINDOW_UPDATE, 0, streamId, payload);
}

export function rstStreamFrame(streamId: number, code: number): Buffer {
  const payload = Buffer.allocUnsafe(4);
  payload.writeUInt32BE(code, 0);
  return frame(FrameType.RST_STREAM, 0, streamId, payload);
}

export function goawayFrame(lastStreamId: number, code: number): Buffer {
  const payload = Buffer.allocUnsafe(8);
  payload.writeUInt32BE(lastStreamId & 0x7fffffff, 0);
  payload.writeUInt32BE(code, 4);
  return frame(FrameType.GOAWAY, 0, 0, payload);
}

/**
 * The payload of a frame that may be padded (DATA, HEADERS), without its padding; for HEADERS with
 * the PRIORITY flag, without its 5 priority bytes too. Undefined when the padding is longer than the
 * frame (a PROTOCOL_ERROR).
 */
export function unpadded(payload: Buffer, flags: number, priority: boolean): Buffer | undefined {
  let start = 0;
  let end = payload.length;
  if (flags & Flag.PADDED) {
    if (payload.length < 1) return undefined;
    end -= payload[0]!;
    start = 1;
  }
  if (priority && flags & Flag.PRIORITY) start += 5;
  return start <= end ? payload.subarray(start, end) : undefined;
}
