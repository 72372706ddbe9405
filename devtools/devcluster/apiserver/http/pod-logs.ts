// GET pods/{name}/log: the API server owns the endpoint, the kubelet owns the logs. Whoever runs
// pods registers a PodLogSource; without one the endpoint answers that no container is running.

export interface PodLogRequest {
  namespace: string;
  name: string;
  container?: string;
  follow: boolean;
  previous: boolean;
  timestamps: boolean;
  tailLines?: number;
  sinceSeconds?: number;
  limitBytes?: number;
  /** Aborted when the client goes away (stop following). */
  signal: AbortSignal;
}

/** Streams a container's log; throw a TesseraError (e.g. apiErrors.badRequest) to refuse. */
export type PodLogSource = (
  request: PodLogRequest,
) => AsyncIterable<string | Uint8Array> | Promise<AsyncIterable<string | Uint8Array>>;

export function podLogRequest(
  namespace: string,
  name: string,
  query: URLSearchParams,
  signal: AbortSignal,
): PodLogRequest {
  const num = (key: string) => {
    const raw = query.get(key);
    return raw === null || raw === "" || Number.isNaN(Number(raw)) ? undefined : Number(raw);
  };
  const tailLines = num("tailLines");
  const sinceSeconds = num("sinceSeconds");
  const limitBytes = num("limitBytes");
  const container = query.get("container");
  return {
    namespace,
    name,
    ...(container ? { container } : {}),
    follow: query.get("follow") === "true",
    previous: query.get("previous") === "true",
    timestamps: query.get("timestamps") === "true",
    ...(tailLines !== undefined ? { tailLines } : {}),
    ...(sinceSeconds !== undefined ? { sinceSeconds } : {}),
    ...(limitBytes !== undefined ? { limitBytes } : {}),
    signal,
  };
}
