import assert from "node:assert/strict";
import { Utf8Stream } from "./utf8-stream.ts";

/** What TextDecoder's streaming decode hands out for each chunk, then its final flush. */
function reference(chunks: readonly Uint8Array[]): string[] {
  const decoder = new TextDecoder("utf-8", { ignoreBOM: true });
  return [...chunks.map((c) => decoder.decode(c, { stream: true })), decoder.decode()];
}

function streamed(chunks: readonly Uint8Array[], stream = new Utf8Stream()): string[] {
  return [...chunks.map((c) => stream.push(c)), stream.flush()];
}

const bytes = (...b: number[]) => Uint8Array.from(b);

describe("Utf8Stream", () => {
  it("holds a character's first bytes until the chunk that completes it", () => {
    assert.deepEqual(streamed([bytes(0x61, 0xe2), bytes(0x82), bytes(0xac, 0x62)]), ["a", "", "€b", ""]);
    assert.deepEqual(streamed([bytes(0xf0), bytes(0x9f), bytes(0x99), bytes(0x82)]), ["", "", "", "🙂", ""]);
  });

  it("gives U+FFFD where a character breaks off or never ends, as TextDecoder does", () => {
    // E2 82 then "A": one U+FFFD for the two bytes, and "A" read again.
    assert.deepEqual(streamed([bytes(0xe2, 0x82), bytes(0x41)]), ["", "\uFFFDA", ""]);
    assert.deepEqual(streamed([bytes(0xf0, 0x9f)]), ["", "\uFFFD"]);
    // Overlong (E0 80), surrogate (ED A0) and past U+10FFFF (F4 90) second bytes break at once.
    for (const lead of [0xe0, 0xed, 0xf4]) {
      const second = lead === 0xe0 ? 0x80 : lead === 0xed ? 0xa0 : 0x90;
      assert.deepEqual(
        streamed([bytes(lead), bytes(second, 0x80)]),
        reference([bytes(lead), bytes(second, 0x80)]),
      );
    }
  });

  it("keeps a byte-order mark as text", () => {
    assert.deepEqual(streamed([bytes(0xef, 0xbb), bytes(0xbf, 0x61)]), ["", "\uFEFFa", ""]);
  });

  it("hands out exactly what TextDecoder's streaming decode does, chunk by chunk, over random bytes", () => {
    let seed = 7;
    const rand = (n: number) => {
      seed = (Math.imul(seed, 1_103_515_245) + 12_345) >>> 0;
      return (seed >>> 8) % n;
    };
    // Mostly whole characters of 1-4 bytes, with stray continuation bytes, bad leads and bad second
    // bytes mixed in, cut into chunks of 0-6 bytes.
    const characters = ["a", "é", "€", "日", "🙂", "\uFEFF", "\u{10FFFF}"].map((c) =>
      new TextEncoder().encode(c),
    );
    const strays = [0x80, 0xbf, 0xc0, 0xc1, 0xf5, 0xff, 0xe0, 0xed, 0xf0, 0xf4, 0xa0, 0x90, 0x9f, 0x8f];
    const stream = new Utf8Stream();
    for (let round = 0; round < 4000; round++) {
      const all: number[] = [];
      for (let n = rand(12); n > 0; n--) {
        if (rand(3) === 0) all.push(strays[rand(strays.length)]!);
        else all.push(...characters[rand(characters.length)]!);
      }
      const chunks: Uint8Array[] = [];
      for (let at = 0; at < all.length; ) {
        const size = Math.min(rand(7), all.length - at);
        chunks.push(Uint8Array.from(all.slice(at, at + size)));
        at += size;
      }
      // One stream for every round: after a flush it starts anew.
      const got = streamed(chunks, stream);
      assert.deepEqual(
        got,
        reference(chunks),
        `bytes ${all.map((b) => b.toString(16))} in ${chunks.map((c) => c.length)}`,
      );
    }
  });
});
