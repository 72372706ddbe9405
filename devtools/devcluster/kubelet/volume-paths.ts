// Volumes without a container runtime: each volume is a host folder, and a container's mount
// paths are mapped onto those folders by rewriting paths in its command, args, env values and
// working dir (an argument `/models/llama` under a mount at `/models` becomes `<host>/llama`, inside a
// JSON argument too).
// emptyDir: a folder of the pod, removed with it. configMap/secret: a folder with one file per
// key, kept up to date while the pod runs (refreshVolumes), as a kubelet's sync loop does, and laid out
// as a kubelet's atomic writer lays it out: the files in a `..<timestamp>` folder, a `..data` link to it
// and one link per top-level name through `..data`; an update writes a new folder and swaps `..data` by
// one rename, so a reader (a TLS Secret's tls.crt and tls.key) sees all old files or all new ones. Unlike
// a kubelet's, a subPath mount of one follows the updates too. projected: the same, from several
// sources, the service account's token among them (projected-volume.ts). hostPath: the path itself.
// persistentVolumeClaim: a folder per claim under the kubelet's root, kept across pods (so a
// StatefulSet's replica finds its data again).
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { type Result, TesseraError } from "../../../services/kernel/errors.ts";
import type { Container, KeyToPath, Pod, Volume } from "../objects/pod-types.ts";
import { writeVolumeAtomically } from "./atomic-writer.ts";
import { type ProjectionSources, projectedFiles } from "./projected-volume.ts";

export interface VolumeDirs {
  /** The pod's own folder (emptyDir and projected files live below it). */
  podDir: string;
  /** Folders of persistentVolumeClaims live below it, by namespace and claim name. */
  claimsDir: string;
}

export interface Mount {
  mountPath: string;
  hostPath: string;
}

/** A configMap or secret volume: which kind, its object's name, settings, and data (undefined: no such object). */
function keyedSource(volume: Volume, sources: ProjectionSources) {
  const source = volume.configMap ?? volume.secret;
  if (!source) return undefined;
  const name = volume.configMap?.name ?? volume.secret?.secretName ?? "";
  return {
    what: volume.configMap ? "configmap" : "secret",
    name,
    items: source.items,
    optional: source.optional === true,
    data: volume.configMap ? sources.configMap(name) : sources.secret(name),
  };
}

/**
 * The files of a keyed volume (relative path -> text: `items`, else one per key) and the keys `items`
 * names that `data` lacks.
 */
function keyFiles(
  data: Record<string, string>,
  items: KeyToPath[] | undefined,
): { files: Map<string, string>; missing: string[] } {
  const files = new Map<string, string>();
  const missing: string[] = [];
  for (const item of items ?? Object.keys(data).map((key) => ({ key, path: key }))) {
    if (Object.hasOwn(data, item.key)) files.set(path.normalize(item.path), data[item.key] ?? "");
    else missing.push(item.key);
  }
  return { files, missing };
}

/** The files a volume written by writeVolumeAtomically holds now (relative path -> text), read through `..data`. */
function currentFiles(dir: string): Map<string, string> {
  const current = new Map<string, string>();
  const data = path.join(dir, "..data");
  if (!existsSync(data)) return current;
  for (const relative of readdirSync(data, { recursive: true }) as string[]) {
    const file = path.join(data, relative);
    if (statSync(file).isFile()) current.set(path.normalize(relative), readFileSync(file, "utf8"));
  }
  return current;
}

function sameFiles(a: ReadonlyMap<string, string>, b: ReadonlyMap<string, string>): boolean {
  return a.size === b.size && [...a].every(([k, v]) => b.get(k) === v);
}

/** Creates the host folder of every volume of the pod; returns volume name -> host path. */
export function prepareVolumes(
  pod: Pod,
  dirs: VolumeDirs,
  sources: ProjectionSources,
): Result<Map<string, string>> {
  const paths = new Map<string, string>();
  const namespace = pod.metadata.namespace ?? "default";
  for (const volume of pod.spec.volumes ?? []) {
    const own = path.join(dirs.podDir, "volumes", volume.name);
    if (volume.hostPath) {
      const type = volume.hostPath.type ?? "";
      if (type === "DirectoryOrCreate") mkdirSync(volume.hostPath.path, { recursive: true });
      paths.set(volume.name, volume.hostPath.path);
    } else if (volume.persistentVolumeClaim) {
      const dir = path.join(dirs.claimsDir, namespace, volume.persistentVolumeClaim.claimName);
      mkdirSync(dir, { recursive: true });
      paths.set(volume.name, dir);
    } else if (volume.configMap || volume.secret) {
      const { what, name, items, optional, data } = keyedSource(volume, sources)!;
      if (!data && !optional) return { error: TesseraError.notFound(`${what} "${name}" not found`) };
      const { files, missing } = keyFiles(data ?? {}, items);
      writeVolumeAtomically(own, files);
      if (missing.length > 0 && data && !optional)
        return { error: TesseraError.notFound(`${what} "${name}" has no key ${missing.join(", ")}`) };
      paths.set(volume.name, own);
    } else if (volume.projected) {
      const files = projectedFiles(pod, volume.projected.sources, sources);
      if (files.error) return { error: files.error };
      writeVolumeAtomically(own, files.value);
      paths.set(volume.name, own);
    } else {
      mkdirSync(own, { recursive: true });
      paths.set(volume.name, own);
    }
  }
  return { value: paths };
}

/**
 * Brings the files of the pod's configMap, secret and projected volumes (`volumes`: as prepareVolumes
 * returned) up to date with their objects: when any file differs, the whole new set is written into a
 * new folder and `..data` swapped to it (writeVolumeAtomically), so a reader sees the old files or the new, never a
 * mix, and a key gone from the object goes from the folder. A volume whose object is gone keeps its
 * files, as on a kubelet. Returns the names of the volumes that changed.
 */
export function refreshVolumes(
  pod: Pod,
  volumes: ReadonlyMap<string, string>,
  sources: ProjectionSources,
): string[] {
  const changed: string[] = [];
  for (const volume of pod.spec.volumes ?? []) {
    const dir = volumes.get(volume.name);
    const wanted = dir === undefined ? undefined : wantedFiles(pod, volume, dir, sources);
    if (!wanted || dir === undefined || sameFiles(wanted, currentFiles(dir))) continue;
    writeVolumeAtomically(dir, wanted);
    changed.push(volume.name);
  }
  return changed;
}

/** The files a configMap, secret or projected volume should hold now; undefined to leave it as it is. */
function wantedFiles(
  pod: Pod,
  volume: Volume,
  dir: string,
  sources: ProjectionSources,
): Map<string, string> | undefined {
  if (volume.projected) {
    return projectedFiles(pod, volume.projected.sources, sources, currentFiles(dir)).value;
  }
  const source = keyedSource(volume, sources);
  return source?.data ? keyFiles(source.data, source.items).files : undefined;
}

/** The container's mounts as host folders, longest mount path first. */
export function containerMounts(container: Container, volumes: Map<string, string>): Result<Mount[]> {
  const mounts: Mount[] = [];
  for (const mount of container.volumeMounts ?? []) {
    const base = volumes.get(mount.name);
    if (base === undefined)
      return { error: TesseraError.notFound(`volume "${mount.name}" is not declared by the pod`) };
    const hostPath = mount.subPath ? path.join(base, mount.subPath) : base;
    if (mount.subPath) mkdirSync(hostPath, { recursive: true });
    mounts.push({ mountPath: mount.mountPath.replace(/\/+$/, "") || "/", hostPath });
  }
  return { value: mounts.sort((a, b) => b.mountPath.length - a.mountPath.length) };
}

function mapOne(value: string, mounts: readonly Mount[]): string {
  for (const { mountPath, hostPath } of mounts) {
    if (value === mountPath) return hostPath;
    if (value.startsWith(`${mountPath}/`)) return hostPath + value.slice(mountPath.length);
  }
  return value;
}

/**
 * Rewrites every path under a mount: a whole argument, one after `=` or `:` (`--model=/models/x`, PATH
 * lists), or one inside a JSON or quoted argument (`--config-json {"file":"/etc/keys/k.yaml"}`).
 */
export function mapPaths(text: string, mounts: readonly Mount[]): string {
  if (mounts.length === 0) return text;
  return text.replace(/[^=:"',\s{}[\]]+/g, (token) =>
    token.startsWith("/") ? mapOne(token, mounts) : token,
  );
}
