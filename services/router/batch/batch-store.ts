// The Batch API's files and batches in a folder (a PersistentVolume in a cluster), so they outlive the
// router process: files/<id> holds a file's bytes and files/<id>.json its OpenAI file object;
// batches/<id>.json a batch's OpenAI batch object (with the caller's API key, to run its lines as that
// caller after a restart) and batches/<id>.results.jsonl its results in input order as they finish
// (the journal a restarted router resumes from). Objects are written to a temporary name and renamed,
// so a crash never leaves half an object.
import { randomBytes } from "node:crypto";
import { createReadStream, existsSync } from "node:fs";
import { mkdir, readdir, readFile, rename, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import type { Readable } from "node:stream";
import { TesseraError } from "../../kernel/errors.ts";

export interface FileObject {
  id: string;
  object: "file";
  bytes: number;
  created_at: number;
  filename: string;
  purpose: string;
  status: "processed";
  expires_at: number | null;
  status_details: null;
}

export type BatchStatus =
  | "validating"
  | "failed"
  | "in_progress"
  | "finalizing"
  | "completed"
  | "expired"
  | "cancelling"
  | "cancelled";

export interface BatchObject {
  id: string;
  object: "batch";
  endpoint: string;
  errors: {
    object: "list";
    data: { code: string; message: string; line: number | null; param: string | null }[];
  } | null;
  input_file_id: string;
  completion_window: string;
  status: BatchStatus;
  output_file_id: string | null;
  error_file_id: string | null;
  created_at: number;
  in_progress_at: number | null;
  expires_at: number | null;
  finalizing_at: number | null;
  completed_at: number | null;
  failed_at: number | null;
  expired_at: number | null;
  cancelling_at: number | null;
  cancelled_at: number | null;
  request_counts: { total: number; completed: number; failed: number };
  metadata: Record<string, string> | null;
}

/** A batch as stored: the API's object and what running it needs. */
export interface StoredBatch {
  batch: BatchObject;
  apiKey: string | undefined;
}

export function newId(prefix: "file" | "batch"): string {
  return `${prefix}-${randomBytes(12).toString("hex")}`;
}

export class BatchStore {
  readonly #files: string;
  readonly #batches: string;

  private constructor(dir: string) {
    this.#files = path.join(dir, "files");
    this.#batches = path.join(dir, "batches");
  }

  static async open(dir: string): Promise<BatchStore> {
    const store = new BatchStore(dir);
    await mkdir(store.#files, { recursive: true });
    await mkdir(store.#batches, { recursive: true });
    return store;
  }

  filePath(id: string): string {
    return path.join(this.#files, checkId(id, "file"));
  }

  resultsPath(batchId: string): string {
    return path.join(this.#batches, `${checkId(batchId, "batch")}.results.jsonl`);
  }

  async addFile(filename: string, purpose: string, content: Uint8Array | string): Promise<FileObject> {
    const id = newId("file");
    await writeAtomic(this.filePath(id), content);
    return this.#describe(id, filename, purpose, (await stat(this.filePath(id))).size);
  }

  /** Registers a file written in place at filePath(id) (a batch's output). */
  async describeWritten(id: string, filename: string): Promise<FileObject> {
    return this.#describe(id, filename, "batch_output", (await stat(this.filePath(id))).size);
  }

  async #describe(id: string, filename: string, purpose: string, bytes: number): Promise<FileObject> {
    const file: FileObject = {
      id,
      object: "file",
      bytes,
      created_at: nowSeconds(),
      filename,
      purpose,
      status: "processed",
      expires_at: null,
      status_details: null,
    };
    await writeAtomic(`${this.filePath(id)}.json`, JSON.stringify(file));
    return file;
  }

  async file(id: string): Promise<FileObject> {
    const meta = `${this.filePath(id)}.json`;
    if (!existsSync(meta)) throw TesseraError.notFound(`no file "${id}"`);
    return JSON.parse(await readFile(meta, "utf8")) as FileObject;
  }

  async fileContent(id: string): Promise<Readable> {
    await this.file(id);
    return createReadStream(this.filePath(id));
  }

  async files(): Promise<FileObject[]> {
    const names = (await readdir(this.#files)).filter((n) => n.endsWith(".json"));
    const all = await Promise.all(
      names.map(async (n) => JSON.parse(await readFile(path.join(this.#files, n), "utf8"))),
    );
    return (all as FileObject[]).sort((a, b) => b.created_at - a.created_at || b.id.localeCompare(a.id));
  }

  async saveBatch(stored: StoredBatch): Promise<void> {
    await writeAtomic(
      path.join(this.#batches, `${checkId(stored.batch.id, "batch")}.json`),
      JSON.stringify(stored),
    );
  }

  async batch(id: string): Promise<StoredBatch> {
    const file = path.join(this.#batches, `${checkId(id, "batch")}.json`);
    if (!existsSync(file)) throw TesseraError.notFound(`no batch "${id}"`);
    return JSON.parse(await readFile(file, "utf8")) as StoredBatch;
  }

  /** Every batch, newest first. */
  async batches(): Promise<StoredBatch[]> {
    const names = (await readdir(this.#batches)).filter((n) => n.endsWith(".json"));
    const all = await Promise.all(
      names.map(async (n) => JSON.parse(await readFile(path.join(this.#batches, n), "utf8")) as StoredBatch),
    );
    return all.sort(
      (a, b) => b.batch.created_at - a.batch.created_at || b.batch.id.localeCompare(a.batch.id),
    );
  }
}

export function nowSeconds(): number {
  return Math.floor(Date.now() / 1000);
}

/** Ids become file names: only what newId makes is accepted, so a request cannot name another path. */
function checkId(id: string, prefix: "file" | "batch"): string {
  if (!new RegExp(`^${prefix}-[0-9a-f]{24}$`).test(id)) throw TesseraError.notFound(`no ${prefix} "${id}"`);
  return id;
}

async function writeAtomic(file: string, content: Uint8Array | string): Promise<void> {
  const temporary = `${file}.${process.pid}.tmp`;
  await writeFile(temporary, content);
  await rename(temporary, file);
}
