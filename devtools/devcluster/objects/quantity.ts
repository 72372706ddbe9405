// Kubernetes resource quantities ("500m", "2", "1Gi", "1e3") as numbers in base units: cores for
// cpu, bytes for memory, a count for extended resources such as nvidia.com/gpu.
import type { Quantity } from "./pod-types.ts";

const SUFFIXES: Record<string, number> = {
  n: 1e-9,
  u: 1e-6,
  m: 1e-3,
  "": 1,
  k: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  P: 1e15,
  E: 1e18,
  Ki: 2 ** 10,
  Mi: 2 ** 20,
  Gi: 2 ** 30,
  Ti: 2 ** 40,
  Pi: 2 ** 50,
  Ei: 2 ** 60,
};

const QUANTITY = /^([+-]?(?:\d+\.?\d*|\.\d+))(?:([eE][+-]?\d+)|(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE])?)$/;

/** The quantity's value, or undefined when it is not a valid quantity. */
export function parseQuantity(quantity: Quantity | undefined): number | undefined {
  if (quantity === undefined) return undefined;
  if (typeof quantity === "number") return Number.isFinite(quantity) ? quantity : undefined;
  const match = QUANTITY.exec(quantity.trim());
  if (!match) return undefined;
  const base = Number(match[1]);
  if (match[2]) return base * 10 ** Number(match[2].slice(1));
  return base * (SUFFIXES[match[3] ?? ""] ?? 1);
}

/** Millicores as Kubernetes prints them: "1500m", or "2" for whole cores. */
export function formatCpu(cores: number): string {
  const milli = Math.round(cores * 1000);
  return milli % 1000 === 0 ? String(milli / 1000) : `${milli}m`;
}

/** Bytes as Kubernetes prints node memory: in Ki. */
export function formatMemory(bytes: number): string {
  return `${Math.floor(bytes / 1024)}Ki`;
}
