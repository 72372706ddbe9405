// The server-timing trailer of a Generate call: how long each hop spent on the request, in the
// syntax of HTTP's Server-Timing header (W3C Server Timing: `worker;dur=812.4, router;dur=815.9`,
// milliseconds). A worker reports `worker`, the router adds `router` (its whole time on the call,
// the worker's included). A client subtracts them from what it measured to see what the network and
// each hop added, without the model's own time, which varies with the batch the request ran in.

export const SERVER_TIMING = "server-timing";

/** The trailer's value: one `name;dur=ms` entry per hop, in the order given. */
export function serverTiming(entries: Readonly<Record<string, number>>): string {
  return Object.entries(entries)
    .map(([name, ms]) => `${name};dur=${ms.toFixed(3)}`)
    .join(", ");
}

/** The durations (ms) a server-timing value gives by name; entries without a valid dur are skipped. */
export function parseServerTiming(value: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const entry of value.split(",")) {
    const [name, ...params] = entry.split(";").map((part) => part.trim());
    if (!name) continue;
    for (const param of params) {
      const [key, raw] = param.split("=");
      const ms = Number(raw);
      if (
        key?.trim().toLowerCase() === "dur" &&
        raw !== undefined &&
        raw.trim() !== "" &&
        Number.isFinite(ms)
      )
        out[name] = ms;
    }
  }
  return out;
}
