// Pod IPs: loopback addresses handed out round-robin from the node's pod CIDR, so a freed address
// is not reused at once. Addresses ending in .0 or .255 and 127.0.0.1 are skipped.
import { parsePodCidr } from "./kubelet-config.ts";

const LOCALHOST = 0x7f000001;

export function formatIp(address: number): string {
  return [24, 16, 8, 0].map((shift) => (address >>> shift) & 255).join(".");
}

export function parseIp(ip: string): number | undefined {
  const parts = ip.split(".").map(Number);
  if (parts.length !== 4 || parts.some((p) => !Number.isInteger(p) || p < 0 || p > 255)) return undefined;
  return parts.reduce((acc, p) => acc * 256 + p, 0);
}

export class PodIpPool {
  readonly #base: number;
  readonly #size: number;
  readonly #used = new Set<number>();
  #cursor = 0;

  constructor(cidr: string) {
    const { base, size } = parsePodCidr(cidr);
    this.#base = base;
    this.#size = size;
  }

  get used(): number {
    return this.#used.size;
  }

  /** A free address (the preferred one when it is free and in range); undefined when none is left. */
  allocate(preferred?: string): string | undefined {
    const wanted = preferred === undefined ? undefined : parseIp(preferred);
    if (wanted !== undefined && this.#usable(wanted) && !this.#used.has(wanted)) {
      this.#used.add(wanted);
      return formatIp(wanted);
    }
    for (let i = 0; i < this.#size; i++) {
      const candidate = this.#base + ((this.#cursor + i) % this.#size);
      if (!this.#usable(candidate) || this.#used.has(candidate)) continue;
      this.#cursor = candidate - this.#base + 1;
      this.#used.add(candidate);
      return formatIp(candidate);
    }
    return undefined;
  }

  release(ip: string): void {
    const address = parseIp(ip);
    if (address !== undefined) this.#used.delete(address);
  }

  #usable(address: number): boolean {
    const last = address & 255;
    return (
      address >= this.#base &&
      address < this.#base + this.#size &&
      last !== 0 &&
      last !== 255 &&
      address !== LOCALHOST
    );
  }
}
