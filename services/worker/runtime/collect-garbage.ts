// A full garbage collection of the calling thread's heap, for the one moment a model thread makes
// hundreds of MiB of garbage and then may sit idle: its load. Building a session reads the weights into
// typed arrays and serializes them into the graph (a copy each); onnxruntime then holds its own. An idle
// thread allocates nothing, so V8 may not collect them for a long time: `tessera serve` on the base
// preset (336 MiB of weights) read 925 MiB resident after load in 2 of 6 starts, with 340 MiB more
// array buffers in the model thread, against 587-592 MiB in the others (issue 18).
// Node exposes gc() only under --expose-gc; the flag set at run time exposes it in a new context.
import v8 from "node:v8";
import vm from "node:vm";

export function collectGarbage(): void {
  v8.setFlagsFromString("--expose-gc");
  (vm.runInNewContext("gc") as () => void)();
}
