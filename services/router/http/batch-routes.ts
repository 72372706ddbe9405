// OpenAI's Files and Batch API at the router (what the official clients' files.create, files.retrieve,
// files.content, batches.create/retrieve/cancel/list call): POST /v1/files (multipart, purpose
// "batch"), GET /v1/files[/ID[/content]], POST /v1/batches, GET /v1/batches[/ID], POST
// /v1/batches/ID/cancel. Each call is authenticated as the OpenAI door is; a batch's lines later run as
// the caller who created it (router/batch/). Without a batch folder configured every route is 404
// naming batch.dir.
import type { IncomingMessage, ServerResponse } from "node:http";
import { z } from "zod";
import { Code, TesseraError } from "../../kernel/errors.ts";
import type { BatchJobs } from "../batch/batch-jobs.ts";
import type { Router } from "../core/router.ts";
import { bearer } from "../grpc/grpc-request.ts";
import { sendJson } from "./http-errors.ts";
import { PayloadTooLarge, readJson } from "./request-body.ts";

const createSchema = z.strictObject({
  input_file_id: z.string().min(1),
  endpoint: z.string().min(1),
  completion_window: z.string().min(1),
  metadata: z.record(z.string(), z.string()).nullish(),
  output_expires_after: z.unknown().optional(),
});

export function isBatchRoute(path: string): boolean {
  return (
    path === "/v1/files" ||
    path.startsWith("/v1/files/") ||
    path === "/v1/batches" ||
    path.startsWith("/v1/batches/")
  );
}

export async function handleBatchRoute(
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
  router: Router,
  jobs: BatchJobs | undefined,
  limits: { maxRequestBytes: number; maxFileBytes: number },
): Promise<void> {
  const apiKey = bearer(header(req, "authorization")) ?? header(req, "x-api-key");
  router.checkApiKey(apiKey);
  if (jobs === undefined)
    throw TesseraError.notFound("the Batch API is off on this router (set batch.dir in its config)");
  const parts = url.pathname.split("/").slice(2).map(decodeURIComponent);
  const [collection, id, action, ...rest] = parts;
  const method = req.method ?? "GET";
  if (rest.length > 0) throw noRoute(method, url.pathname);
  if (collection === "files") {
    if (method === "POST" && id === undefined)
      return sendJson(res, 200, await upload(req, jobs, limits.maxFileBytes));
    if (method === "GET" && id === undefined) return sendJson(res, 200, list(await jobs.store.files()));
    if (method === "GET" && id !== undefined && action === undefined)
      return sendJson(res, 200, await jobs.store.file(id));
    if (method === "GET" && id !== undefined && action === "content") {
      const file = await jobs.store.file(id);
      const content = await jobs.store.fileContent(id);
      res.writeHead(200, { "content-type": "application/octet-stream", "content-length": file.bytes });
      content.pipe(res);
      return;
    }
  }
  if (collection === "batches") {
    if (method === "POST" && id === undefined) {
      const body = createSchema.safeParse(await readJson(req, limits.maxRequestBytes));
      if (!body.success) {
        const issue = body.error.issues[0];
        const field = issue?.code === "unrecognized_keys" ? issue.keys[0] : issue?.path.map(String).join(".");
        throw TesseraError.invalidArgument(field || "body", issue?.message ?? "invalid");
      }
      return sendJson(res, 200, await jobs.create(body.data, apiKey));
    }
    if (method === "GET" && id === undefined) {
      const limit = Number(url.searchParams.get("limit") ?? 20);
      if (!Number.isInteger(limit) || limit < 1 || limit > 100)
        throw TesseraError.invalidArgument("limit", "must be an integer in 1..100");
      const page = await jobs.list(limit, url.searchParams.get("after") ?? undefined);
      return sendJson(res, 200, { ...list(page.data), has_more: page.hasMore });
    }
    if (method === "GET" && id !== undefined && action === undefined)
      return sendJson(res, 200, await jobs.get(id));
    if (method === "POST" && id !== undefined && action === "cancel")
      return sendJson(res, 200, await jobs.cancel(id));
  }
  throw noRoute(method, url.pathname);
}

/** POST /v1/files: a multipart form with `file` and `purpose` ("batch"), bounded by maxFileBytes. */
async function upload(req: IncomingMessage, jobs: BatchJobs, maxFileBytes: number) {
  const type = header(req, "content-type") ?? "";
  if (!type.startsWith("multipart/form-data"))
    throw TesseraError.invalidArgument(
      "content-type",
      "must be multipart/form-data (fields file and purpose)",
    );
  const declared = Number(req.headers["content-length"] ?? 0);
  if (declared > maxFileBytes) throw new PayloadTooLarge(maxFileBytes);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > maxFileBytes) throw new PayloadTooLarge(maxFileBytes);
    chunks.push(chunk);
  }
  let form: FormData;
  try {
    form = await new Response(Buffer.concat(chunks), { headers: { "content-type": type } }).formData();
  } catch (err) {
    throw TesseraError.invalidArgument("body", `not a multipart form: ${(err as Error).message}`);
  }
  const purpose = form.get("purpose");
  if (purpose !== "batch") throw TesseraError.invalidArgument("purpose", 'must be "batch"');
  const file = form.get("file");
  if (file === null || typeof file === "string")
    throw TesseraError.invalidArgument("file", "a file is required");
  return jobs.store.addFile(file.name || "upload.jsonl", purpose, await file.bytes());
}

function list<T extends { id: string }>(data: T[]) {
  return {
    object: "list",
    data,
    first_id: data[0]?.id ?? null,
    last_id: data.at(-1)?.id ?? null,
    has_more: false,
  };
}

function noRoute(method: string, path: string): TesseraError {
  return new TesseraError(Code.NOT_FOUND, `no route for ${method} ${path}`);
}

function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  const first = Array.isArray(value) ? value[0] : value;
  return first === "" ? undefined : first;
}
