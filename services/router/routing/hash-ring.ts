// A consistent-hash ring. Each member owns `virtualNodes` points on a ring of 2^52 positions (the
// first 52 bits of sha256("name#i")); a key at position p belongs to the member owning the first point
// at or after p. walk(p) lists every member in the order the ring meets them from p: the first is the
// key's home, the rest are where it goes when the home is unhealthy or over capacity.
//
// The ring depends only on the member names, never on the order they were added or on their health,
// so every router that sees the same endpoints computes the same homes (active-active without shared
// state), and adding a member moves only the keys it takes over (about 1/n of them).
import { hash } from "node:crypto";

/** The ring position of a hex digest: its first 13 hex digits (52 bits, exact in a double). */
export function positionOfHex(hex: string): number {
  return Number.parseInt(hex.slice(0, 13), 16);
}

/** The ring position of any string. */
export function positionOf(text: string): number {
  return positionOfHex(hash("sha256", text, "hex"));
}

export class HashRing {
  readonly members: readonly string[];
  readonly #points: Float64Array;
  readonly #owners: Int32Array;

  constructor(members: Iterable<string>, virtualNodes: number) {
    this.members = [...new Set(members)].sort();
    const points = this.members.flatMap((name, owner) =>
      Array.from({ length: virtualNodes }, (_, i) => ({ at: positionOf(`${name}#${i}`), owner })),
    );
    points.sort((a, b) => a.at - b.at || a.owner - b.owner);
    this.#points = Float64Array.from(points, (p) => p.at);
    this.#owners = Int32Array.from(points, (p) => p.owner);
  }

  /** Every member, in the order the ring meets them going clockwise from `position`. */
  walk(position: number): string[] {
    const n = this.members.length;
    const order: string[] = [];
    if (n === 0) return order;
    const seen = new Uint8Array(n);
    const count = this.#points.length;
    const start = this.#firstAtOrAfter(position);
    for (let i = 0; i < count && order.length < n; i++) {
      const owner = this.#owners[(start + i) % count]!;
      if (seen[owner] === 1) continue;
      seen[owner] = 1;
      order.push(this.members[owner]!);
    }
    return order;
  }

  /** The member that owns `position`. */
  home(position: number): string | undefined {
    if (this.#points.length === 0) return undefined;
    return this.members[this.#owners[this.#firstAtOrAfter(position) % this.#points.length]!];
  }

  #firstAtOrAfter(position: number): number {
    let lo = 0;
    let hi = this.#points.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.#points[mid]! < position) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}
