// Batches sent as pipelines with a few in flight at once, so that encoding or verifying one batch
// overlaps with the transfer of the next, while memory stays bounded (depth x batch bytes).
// Replies are handled in order; a failure stops sending, and the replies still in flight are dropped.

export async function pipelined<B, R>(
  batches: readonly B[],
  depth: number,
  signal: AbortSignal,
  send: (batch: B) => Promise<R>,
  receive: (batch: B, reply: R) => void,
): Promise<void> {
  const inFlight: { batch: B; reply: Promise<R> }[] = [];
  const receiveOldest = async () => {
    const { batch, reply } = inFlight.shift()!;
    receive(batch, await reply);
  };
  for (const batch of batches) {
    signal.throwIfAborted();
    const reply = send(batch);
    reply.catch(() => {}); // awaited below; a failure of an earlier batch may leave it unawaited
    inFlight.push({ batch, reply });
    if (inFlight.length >= depth) await receiveOldest();
  }
  while (inFlight.length > 0) await receiveOldest();
}
