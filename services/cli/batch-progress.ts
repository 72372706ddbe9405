// What `tessera batch` shows while it runs: on a terminal a progress bar (requests done/total,
// tokens/s, ETA), otherwise one log line every `intervalMs` (a job's log stays readable), and a
// summary at the end. Tokens/s counts this run's generated tokens over its own time, so a resumed run
// is not credited with a previous one's work.
import { Presets, SingleBar } from "cli-progress";
import type { BatchProgress, BatchSummary } from "../batch/batch-runner.ts";

export interface ProgressView {
  update(progress: Readonly<BatchProgress>): void;
  finish(summary: BatchSummary): void;
}

export function progressView(total: number, out: NodeJS.WriteStream, intervalMs = 10_000): ProgressView {
  const started = performance.now();
  const seconds = () => (performance.now() - started) / 1000;
  const rate = (p: Readonly<BatchProgress>) => Math.round(p.completionTokens / Math.max(seconds(), 1e-3));
  const summary = (s: BatchSummary) =>
    `${s.interrupted ? "interrupted" : "done"}: ${s.done}/${total} requests (${s.succeeded} ok, ${s.failed} failed` +
    `${s.resumed > 0 ? `, ${s.resumed} from the previous run` : ""}), ${s.completionTokens} tokens generated in ` +
    `${seconds().toFixed(1)} s (${rate(s)} tok/s)${s.interrupted ? "; run it again to resume" : ""}\n`;
  if (out.isTTY) {
    const bar = new SingleBar(
      {
        format: "{bar} {value}/{total} requests | {rate} tok/s | ETA {eta_formatted}",
        etaBuffer: 50,
        hideCursor: true,
        stream: out,
      },
      Presets.shades_classic,
    );
    bar.start(total, 0, { rate: 0 });
    return {
      update: (p) => bar.update(p.done, { rate: rate(p) }),
      finish: (s) => {
        bar.update(s.done, { rate: rate(s) });
        bar.stop();
        out.write(summary(s));
      },
    };
  }
  let last = Number.NEGATIVE_INFINITY;
  return {
    update: (p) => {
      if (performance.now() - last < intervalMs) return;
      last = performance.now();
      const run = p.done - p.resumed;
      const left = total - p.done;
      const eta = run > 0 ? Math.round((left * seconds()) / run) : undefined;
      out.write(
        `batch: ${p.done}/${total} requests (${p.failed} failed), ${rate(p)} tok/s, ETA ${eta === undefined ? "?" : `${eta} s`}\n`,
      );
    },
    finish: (s) => out.write(summary(s)),
  };
}
