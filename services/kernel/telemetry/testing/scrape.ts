// For specs: one scrape of a process's /metrics, on a port of its own for the while.
import { listeningPort, type Metrics } from "../metrics.ts";

/** The Prometheus text `metrics` serves now. */
export async function scrape(metrics: Metrics): Promise<string> {
  const server = await metrics.serve(0, "127.0.0.1");
  try {
    return await (await fetch(`http://127.0.0.1:${listeningPort(server)}/metrics`)).text();
  } finally {
    server.close();
  }
}
