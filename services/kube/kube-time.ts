// How Kubernetes writes times: metav1.Time (RFC 3339 to the second, creation and deletion
// timestamps, Events, conditions) and metav1.MicroTime (to the microsecond, Leases).

/** RFC 3339 with second precision (metav1.Time). */
export function formatTime(ms: number): string {
  return `${new Date(Math.floor(ms / 1000) * 1000).toISOString().slice(0, 19)}Z`;
}

/** RFC 3339 with microseconds (metav1.MicroTime, used by Leases). */
export function formatMicroTime(ms: number): string {
  return `${new Date(ms).toISOString().slice(0, 23)}000Z`;
}
