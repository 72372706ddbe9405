// The host variables every container inherits (containers share the host's file system), with the
// folder of the Node that runs the cluster first on PATH. The dev WorkerPool's command is
// `node services/cli/main.ts`: it needs the Node the repository's TypeScript runs on (24, shipped in
// node_modules), not whichever `node` the host's PATH finds first (a Debian nodejs 20 cannot load .ts,
// so every pod would crash-loop). npm puts node_modules/.bin on PATH only inside npm scripts, so a
// cluster started as `node_modules/.bin/node ...` would otherwise hand its pods the host's `node`.

/** The named host variables that are set, PATH with nodeBinDir first (and not again later). */
export function inheritedEnv(
  names: readonly string[],
  nodeBinDir: string,
  host: Readonly<Record<string, string | undefined>>,
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of names) {
    const value = host[name];
    if (value !== undefined) env[name] = value;
  }
  // Without PATH the spawn falls back to the system's default search path; leave that as it is.
  if (env["PATH"] !== undefined)
    env["PATH"] = [nodeBinDir, ...env["PATH"].split(":").filter((dir) => dir !== nodeBinDir)].join(":");
  return env;
}
