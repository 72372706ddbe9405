// What a container runs on the host: its command and args (with $(VAR) expanded and mount paths
// mapped), its environment, and its working directory. There is no container runtime: `image`
// is recorded but ignored, so a container must say what to run in `command` (or `args`).
import { mkdirSync } from "node:fs";
import { type Result, TesseraError } from "../../../services/kernel/errors.ts";
import type { Container, Pod } from "../objects/pod-types.ts";
import type { ContainerLaunch } from "./container-runner.ts";
import { type EnvSources, expandVars, type PodFacts, resolveEnv } from "./env-resolver.ts";
import { containerMounts, mapPaths } from "./volume-paths.ts";

export interface LaunchContext {
  pod: Pod;
  container: Container;
  facts: PodFacts;
  sources: EnvSources;
  /** The node's variables (inherited host env, cluster address); the container's env wins. */
  baseEnv: Record<string, string>;
  volumes: Map<string, string>;
  /** Where a container without workingDir runs. */
  defaultWorkingDir: string;
}

export function containerLaunch(ctx: LaunchContext): Result<ContainerLaunch> {
  const { container } = ctx;
  const mounts = containerMounts(container, ctx.volumes);
  if (mounts.error) return { error: mounts.error };
  const resolved = resolveEnv(ctx.pod, container, ctx.facts, ctx.sources, ctx.baseEnv);
  if (resolved.error) return { error: resolved.error };
  const env = resolved.value;
  for (const variable of container.env ?? [])
    if (env[variable.name] !== undefined)
      env[variable.name] = mapPaths(env[variable.name] ?? "", mounts.value);
  const argv = [...(container.command ?? []), ...(container.args ?? [])].map((arg) =>
    mapPaths(expandVars(arg, env), mounts.value),
  );
  const [command, ...args] = argv;
  if (!command) {
    return {
      error: TesseraError.invalidArgument(
        `container ${container.name}`,
        `no command: the dev cluster runs a container's command on the host and ignores its image (${container.image ?? "none"})`,
      ),
    };
  }
  const cwd = container.workingDir ? mapPaths(container.workingDir, mounts.value) : ctx.defaultWorkingDir;
  try {
    mkdirSync(cwd, { recursive: true });
  } catch (err) {
    return {
      error: TesseraError.invalidArgument("workingDir", `cannot use ${cwd}: ${(err as Error).message}`),
    };
  }
  return { value: { command, args, env, cwd, mapPath: (text) => mapPaths(text, mounts.value) } };
}
