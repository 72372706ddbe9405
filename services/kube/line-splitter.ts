// Splits a byte stream into lines (watch streams send one JSON event per line; chunks may cut
// lines and multi-byte characters anywhere).

export class LineSplitter {
  #pending: Buffer = Buffer.alloc(0);

  push(chunk: Buffer): string[] {
    this.#pending = this.#pending.length === 0 ? chunk : Buffer.concat([this.#pending, chunk]);
    const lines: string[] = [];
    let start = 0;
    for (let i = this.#pending.indexOf(10, start); i >= 0; i = this.#pending.indexOf(10, start)) {
      const line = this.#pending.subarray(start, i).toString("utf8").trim();
      if (line) lines.push(line);
      start = i + 1;
    }
    this.#pending = this.#pending.subarray(start);
    return lines;
  }
}
