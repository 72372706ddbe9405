// Metrics of a member of a parallel replica, from its counters (shard-stats.ts): the payload bytes it
// sent over its links by frame kind (activation = hidden states, reduce = all-reduce parts, logits,
// tokens, kv*), where step time goes (rank 0's steps; every member's shard runs and all-reduce waits),
// and whether its group serves. Bytes moved per generated token = sent bytes summed over members ÷ tokens.
import type { Meter } from "@opentelemetry/api";
import type { MemberHandle } from "./member-handle.ts";
import type { ShardCounter } from "./shard-stats.ts";

export function registerShardMetrics(meter: Meter, member: MemberHandle): void {
  const counter = (
    name: string,
    description: string,
    unit: string,
    read: (c: Record<ShardCounter, number>) => number,
  ) =>
    meter
      .createObservableCounter(name, { description, unit })
      .addCallback((r) => r.observe(read(member.counters())));
  meter
    .createObservableCounter("tessera_shard_link_sent_bytes", {
      description: "Payload bytes this member sent to its group peers, by frame kind",
      unit: "bytes",
    })
    .addCallback((result) => {
      for (const [name, value] of Object.entries(member.counters()))
        if (name.startsWith("sent_bytes_")) result.observe(value, { kind: name.slice("sent_bytes_".length) });
    });
  counter("tessera_shard_steps", "Steps rank 0 drove through the group", "1", (c) => c.steps);
  counter(
    "tessera_shard_step_seconds",
    "Wall time of those steps, from hand-over to logits",
    "s",
    (c) => c.step_seconds,
  );
  counter("tessera_shard_runs", "Runs of this member's shard (steps or micro-batches)", "1", (c) => c.runs);
  counter(
    "tessera_shard_run_seconds",
    "Time those runs computed (all-reduce waits excluded)",
    "s",
    (c) => c.run_seconds,
  );
  counter("tessera_shard_reduce_waits", "All-reduces this member took part in", "1", (c) => c.reduces);
  counter(
    "tessera_shard_reduce_wait_seconds",
    "Time this member's runs awaited their all-reduce sums (with micro-batches, another may compute meanwhile)",
    "s",
    (c) => c.reduce_wait_seconds,
  );
  meter
    .createObservableGauge("tessera_shard_group_serving", {
      description: "1 while this member's parallel group is wired and serving, else 0",
    })
    .addCallback((result) => result.observe(member.isServing ? 1 : 0));
}
