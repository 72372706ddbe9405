import assert from "node:assert/strict";
import { listeningPort, Metrics } from "../../kernel/telemetry/metrics.ts";
import { SpecStats } from "./spec-stats.ts";

describe("SpecStats", () => {
  it("exports proposed and accepted tokens, acceptance rate and mean accepted length by model and method", async () => {
    const metrics = new Metrics();
    const stats = new SpecStats();
    stats.observe(metrics, "tiny", "ngram");
    stats.record(4, 3);
    stats.record(4, 0);
    stats.record(2, 2);
    const server = await metrics.serve(0, "127.0.0.1");
    try {
      const text = await (await fetch(`http://127.0.0.1:${listeningPort(server)}/metrics`)).text();
      const labels = '\\{model="tiny",method="ngram"\\}';
      assert.match(text, new RegExp(`^tessera_spec_decode_drafts_total${labels} 3$`, "m"));
      assert.match(text, new RegExp(`^tessera_spec_decode_draft_tokens_total${labels} 10$`, "m"));
      assert.match(text, new RegExp(`^tessera_spec_decode_accepted_tokens_total${labels} 5$`, "m"));
      assert.match(text, new RegExp(`^tessera_spec_decode_acceptance_rate${labels} 0.5$`, "m"));
      assert.match(text, new RegExp(`^tessera_spec_decode_mean_accepted_length${labels} 2.6666`, "m"));
    } finally {
      server.close();
      await metrics.shutdown();
    }
  });
});
