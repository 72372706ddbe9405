// Loaded into a router (`node --import heap-sampler.ts`, see gc-probe.ts): V8's sampling heap profiler
// from TESSERA_SAMPLE_START_MS to TESSERA_SAMPLE_STOP_MS after start, its profile written to
// TESSERA_SAMPLE_FILE (a .heapprofile Chrome DevTools opens). TESSERA_SAMPLE_SURVIVORS=1 keeps only
// what outlived a young collection (the profile is taken after two forced ones, so run the router
// with --expose-gc): what the scavenges copied, rather than everything allocated.
// TESSERA_SAMPLE_MAJOR=0 also drops what mark-compacts collected: what is left is what is still in
// the heap at the end, promoted garbage a mark-compact has not reached yet included.
import { writeFileSync } from "node:fs";
import { Session } from "node:inspector/promises";

const file = process.env["TESSERA_SAMPLE_FILE"];
if (file) {
  const startMs = Number(process.env["TESSERA_SAMPLE_START_MS"] ?? 10_000);
  const stopMs = Number(process.env["TESSERA_SAMPLE_STOP_MS"] ?? 20_000);
  const survivors = process.env["TESSERA_SAMPLE_SURVIVORS"] === "1";
  const session = new Session();
  session.connect();
  setTimeout(async () => {
    await session.post("HeapProfiler.enable");
    await session.post("HeapProfiler.startSampling", {
      samplingInterval: 4096,
      includeObjectsCollectedByMajorGC: process.env["TESSERA_SAMPLE_MAJOR"] !== "0",
      includeObjectsCollectedByMinorGC: !survivors,
    });
    setTimeout(async () => {
      const gc = (globalThis as { gc?: (options: { type: string }) => void }).gc;
      if (survivors && gc) {
        gc({ type: "minor" });
        gc({ type: "minor" });
      }
      const { profile } = await session.post("HeapProfiler.getSamplingProfile");
      await session.post("HeapProfiler.stopSampling");
      writeFileSync(file, JSON.stringify(profile));
    }, stopMs - startMs).unref();
  }, startMs).unref();
}
