// An output file that a batch appends to and a later run resumes: a run killed mid-write may leave a
// torn last line, which is cut off (its request runs again) before anything is appended.
import { type FileHandle, open, stat, truncate } from "node:fs/promises";

/** Cuts `file` after its last newline (nothing when it does not exist); returns its length then. */
export async function cutTornTail(file: string): Promise<number> {
  let size: number;
  try {
    size = (await stat(file)).size;
  } catch {
    return 0;
  }
  if (size === 0) return 0;
  const handle = await open(file, "r");
  try {
    // Read backwards in blocks until a newline.
    const block = Buffer.alloc(64 * 1024);
    let end = size;
    while (end > 0) {
      const start = Math.max(0, end - block.length);
      const { bytesRead } = await handle.read(block, 0, end - start, start);
      const at = block.subarray(0, bytesRead).lastIndexOf(0x0a);
      if (at >= 0) {
        const keep = start + at + 1;
        if (keep < size) await truncate(file, keep);
        return keep;
      }
      end = start;
    }
  } finally {
    await handle.close();
  }
  await truncate(file, 0);
  return 0;
}

/** Appends text; opened on the first write so that a run that writes nothing creates nothing. */
export class Appender {
  readonly #file: string;
  #handle: FileHandle | undefined;

  constructor(file: string) {
    this.#file = file;
  }

  async append(text: string): Promise<void> {
    this.#handle ??= await open(this.#file, "a");
    await this.#handle.write(text);
  }

  async close(): Promise<void> {
    await this.#handle?.close();
    this.#handle = undefined;
  }
}
