// The kubelet's atomic writer for configMap, secret and projected volumes: a reader of the volume sees
// the old files or the new ones, never a mix, because the new set is written beside the old and swapped
// in by renaming one symlink. TLS folders (services/rpc/tls-folder.ts) depend on exactly this layout.
import {
  lstatSync,
  mkdirSync,
  readdirSync,
  readlinkSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import path from "node:path";

let dataFolders = 0;

/**
 * Writes a configMap, secret or projected volume as a kubelet's atomic writer does: `files` in a new
 * `..<timestamp>` folder, `..data` swapped to it by one rename, a link per top-level name through
 * `..data`, names no longer wanted and the previous folder removed.
 */
export function writeVolumeAtomically(dir: string, files: ReadonlyMap<string, string>): void {
  mkdirSync(dir, { recursive: true });
  const data = `..${new Date().toISOString().replace(/[:.]/g, "_")}.${process.pid}.${dataFolders++}`;
  mkdirSync(path.join(dir, data));
  for (const [relative, text] of files) {
    const file = path.join(dir, data, relative);
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, text);
  }
  let previous: string | undefined;
  try {
    previous = readlinkSync(path.join(dir, "..data"));
  } catch {}
  symlinkSync(data, path.join(dir, "..data_tmp"));
  renameSync(path.join(dir, "..data_tmp"), path.join(dir, "..data"));
  const top = new Set([...files.keys()].map((relative) => relative.split(path.sep)[0] ?? relative));
  for (const name of top) {
    const link = path.join(dir, name);
    let isLink = false;
    try {
      isLink = lstatSync(link).isSymbolicLink();
    } catch {}
    if (isLink) continue;
    rmSync(link, { recursive: true, force: true });
    symlinkSync(path.join("..data", name), link);
  }
  for (const entry of readdirSync(dir)) {
    if (!entry.startsWith("..") && !top.has(entry))
      rmSync(path.join(dir, entry), { recursive: true, force: true });
  }
  if (previous !== undefined && previous !== data)
    rmSync(path.join(dir, previous), { recursive: true, force: true });
}
