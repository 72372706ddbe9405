import assert from "node:assert/strict";
import { Rng } from "../worker/sampling/rng.ts";
import { StopStringMatcher } from "./stop-strings.ts";

/** Feeds `deltas`, checks the per-push contract, and returns everything emitted plus the outcome. */
function stream(stops: string[], deltas: string[]): { out: string; stopped: boolean; emitted: string[] } {
  const matcher = new StopStringMatcher(stops);
  const emitted: string[] = [];
  let stopped = false;
  for (const delta of deltas) {
    const r = matcher.push(delta);
    emitted.push(r.text);
    if (r.stopped) {
      stopped = true;
      break;
    }
  }
  if (!stopped) emitted.push(matcher.flush());
  return { out: emitted.join(""), stopped, emitted };
}

/** The expected result: cut before the stop string that completes earliest. */
function reference(stops: string[], text: string): { out: string; stopped: boolean } {
  for (let end = 1; end <= text.length; end++) {
    let start = -1;
    for (const s of stops) {
      if (end >= s.length && text.slice(end - s.length, end) === s) {
        if (start < 0 || end - s.length < start) start = end - s.length;
      }
    }
    if (start >= 0) return { out: text.slice(0, start), stopped: true };
  }
  return { out: text, stopped: false };
}

describe("StopStringMatcher", () => {
  it("passes text through when there are no stop strings", () => {
    assert.deepEqual(stream([], ["Hello", ", ", "world"]), {
      out: "Hello, world",
      stopped: false,
      emitted: ["Hello", ", ", "world", ""],
    });
  });

  it("stops before a stop string inside one delta and drops what follows", () => {
    const m = new StopStringMatcher(["END"]);
    assert.deepEqual(m.push("abc END xyz"), { text: "abc ", stopped: true });
    assert.equal(m.matched, "END");
    assert.deepEqual(m.push("more"), { text: "", stopped: true });
    assert.equal(m.flush(), "");
  });

  it("holds back a possible start and never emits part of a split stop string", () => {
    const m = new StopStringMatcher(["</end>"]);
    assert.deepEqual(m.push("hello </"), { text: "hello ", stopped: false });
    assert.equal(m.held, "</");
    assert.deepEqual(m.push("en"), { text: "", stopped: false });
    assert.deepEqual(m.push("d> tail"), { text: "", stopped: true });
  });

  it("releases held text once it can no longer become a stop string", () => {
    const m = new StopStringMatcher(["abc"]);
    assert.deepEqual(m.push("xab"), { text: "x", stopped: false });
    assert.deepEqual(m.push("d"), { text: "abd", stopped: false });
    assert.deepEqual(m.push("ab"), { text: "", stopped: false });
    assert.equal(m.flush(), "ab");
    assert.equal(m.stopped, false);
  });

  it("handles overlapping candidates (a stop string that restarts inside itself)", () => {
    assert.deepEqual(stream(["aab"], ["a", "a", "a", "b"]).out, "a");
    assert.deepEqual(stream(["abab"], ["ab", "a", "bab"]).out, "");
    assert.deepEqual(stream(["abac"], ["aba", "bac"]).out, "ab");
  });

  it("with several stop strings, stops at the one completed first", () => {
    assert.deepEqual(stream(["abcd", "bc"], ["abcd"]), { out: "a", stopped: true, emitted: ["a"] });
    assert.deepEqual(stream(["abcd", "bc"], ["a", "b", "c", "d"]).out, "a");
    assert.deepEqual(stream(["\n\n", "User:"], ["Hi", " there\n", "User:", " x"]).out, "Hi there\n");
    assert.deepEqual(stream(["xyz", "yz"], ["wxyz"]).out, "w"); // same end: the earlier start wins
    const m = new StopStringMatcher(["xyz", "yz"]);
    m.push("wxyz");
    assert.equal(m.matched, "xyz");
  });

  it("holds the longest pending prefix across several stop strings", () => {
    const m = new StopStringMatcher(["abcde", "cdx"]);
    assert.deepEqual(m.push("zzabcd"), { text: "zz", stopped: false });
    assert.equal(m.held, "abcd");
    assert.deepEqual(m.push("x"), { text: "ab", stopped: true });
    assert.equal(m.matched, "cdx");
  });

  it("matches multi-byte characters split across deltas", () => {
    assert.deepEqual(stream(["日本"], ["こんにちは日", "本語"]).out, "こんにちは");
    assert.deepEqual(stream(["🛑"], ["go ", "🛑", " no"]).out, "go ");
    // A surrogate pair split across deltas: the stop string still matches.
    assert.deepEqual(stream(["🛑"], ["go \uD83D", "\uDED1 no"]).out, "go ");
    assert.deepEqual(stream(["é!"], ["caf", "é", "!"]).out, "caf");
  });

  it("never emits a lone high surrogate", () => {
    const m = new StopStringMatcher(["zz"]);
    assert.deepEqual(m.push("a\uD83D"), { text: "a", stopped: false });
    assert.deepEqual(m.push("\uDE00b"), { text: "😀b", stopped: false });
    const none = new StopStringMatcher([]);
    assert.deepEqual(none.push("\uD83D"), { text: "", stopped: false });
    assert.equal(none.flush(), "\uD83D");
  });

  it("agrees with the whole-text reference for random texts and splits", () => {
    const rng = new Rng(31n);
    const alphabet = ["a", "b", "c", "é", "😀"];
    const pick = (n: number) => rng.nextUint32() % n;
    for (let trial = 0; trial < 2000; trial++) {
      const word = () => Array.from({ length: 1 + pick(3) }, () => alphabet[pick(alphabet.length)]!).join("");
      const stops = Array.from({ length: pick(4) }, word);
      const text = Array.from({ length: pick(20) }, () => alphabet[pick(alphabet.length)]!).join("");
      const deltas: string[] = [];
      for (let i = 0; i < text.length; ) {
        const len = Math.min(text.length - i, pick(5)); // code-unit splits, empty deltas included
        deltas.push(text.slice(i, i + len));
        i += len;
      }
      const got = stream(stops, deltas);
      const want = reference(stops, text);
      assert.equal(got.out, want.out, `stops ${JSON.stringify(stops)} deltas ${JSON.stringify(deltas)}`);
      assert.equal(got.stopped, want.stopped);
      for (const piece of got.emitted.slice(0, -1)) {
        assert.ok(!/[\uD800-\uDBFF]$/.test(piece), "emitted a lone high surrogate");
      }
    }
  });

  it("flush takes a last delta, releases held text and still honours stop strings", () => {
    const a = new StopStringMatcher(["STOP"]);
    assert.deepEqual(a.push("x ST"), { text: "x ", stopped: false });
    assert.equal(a.flush("O"), "STO");
    assert.equal(a.stopped, false);
    const b = new StopStringMatcher(["STOP"]);
    b.push("x ST");
    assert.equal(b.flush("OP and more"), "");
    assert.equal(b.stopped, true);
    assert.equal(b.flush("later"), "");
  });

  it("rejects empty stop strings", () => {
    assert.throws(() => new StopStringMatcher(["a", ""]), RangeError);
  });
});
