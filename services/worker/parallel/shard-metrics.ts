// Metrics of a member of a parallel replica: the payload bytes it sent over its links, by frame kind
// (activation = hidden states, reduce = all-reduce parts, logits, tokens, kv*), and whether its group
// serves. Bytes moved per generated token = the sum over members of the sent bytes ÷ tokens.
import type { Meter } from "@opentelemetry/api";
import type { MemberHandle } from "./member-handle.ts";

export function registerShardMetrics(meter: Meter, member: MemberHandle): void {
  const sent = meter.createObservableCounter("tessera_shard_link_sent_bytes", {
    description: "Payload bytes this member sent to its group peers, by frame kind",
    unit: "bytes",
  });
  sent.addCallback((result) => {
    for (const [kind, bytes] of Object.entries(member.sentBytes)) result.observe(bytes, { kind });
  });
  const serving = meter.createObservableGauge("tessera_shard_group_serving", {
    description: "1 while this member's parallel group is wired and serving, else 0",
  });
  serving.addCallback((result) => result.observe(member.isServing ? 1 : 0));
}
