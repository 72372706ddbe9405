import assert from "node:assert/strict";
import fs from "node:fs";
import { residentBreakdown } from "./smaps.ts";

// Entries as a `tessera serve` process's smaps shows them (fields other than Rss and VmFlags dropped).
const SMAPS = `244f1000-24e6c000 rw-p 00000000 00:00 0                                  [heap]
Rss:                9148 kB
VmFlags: rd wr mr mw me ac 
7fdaaf6b2000-7fdaafeb2000 rw-p 00000000 00:00 0 
Rss:                  20 kB
VmFlags: rd wr mr mw me ac nh 
7fdaafeb2000-7fdacd400000 rw-p 00000000 00:00 0 
Rss:              480568 kB
VmFlags: rd wr mr mw me ac 
7fdacd53c000-7fdacf7c9000 r-xp 0013c000 fe:00 5357818                    /opt/x64/libonnxruntime.so.1
Rss:               20452 kB
VmFlags: rd ex mr mw me 
7fdacffad000-7fdacffb5000 rw-p 02bac000 fe:00 5357818                    /opt/x64/libonnxruntime.so.1
Rss:                  32 kB
VmFlags: rd wr mr mw me ac 
7fdef0000000-7fdef1dbb000 rw-p 00000000 00:00 0 
Rss:               26600 kB
VmFlags: rd wr mr mw me nr 
7fe104379000-7fe108000000 ---p 00000000 00:00 0 
Rss:                   0 kB
VmFlags: mr mw me nr 
7fe108000000-7fe127dc0000 rwxp 00000000 00:00 0 
Rss:                2984 kB
VmFlags: rd wr ex mr mw me dc nr 
7ffd21bfa000-7ffd21c1b000 rw-p 00000000 00:00 0                          [stack]
Rss:                  76 kB
VmFlags: rd wr mr mw me gd ac 
`;

describe("resident breakdown from smaps", () => {
  it("sums each mapping's resident bytes under its kind", () => {
    const kB = 1024;
    assert.deepEqual(residentBreakdown(SMAPS), {
      file: (20452 + 32) * kB,
      brkHeap: 9148 * kB,
      threadArenas: 26600 * kB,
      v8Reserved: 2984 * kB,
      stacks: (20 + 76) * kB,
      otherAnonymous: 480568 * kB,
    });
  });

  it("reads the smaps of this process: its binary mapped, its heap anonymous", function () {
    if (process.platform !== "linux") this.skip();
    const b = residentBreakdown(fs.readFileSync("/proc/self/smaps", "utf8"));
    assert.ok(b.file > 0 && b.otherAnonymous > 0);
  });
});
