import assert from "node:assert/strict";
import type { ServerResponse } from "node:http";
import { apiErrors } from "../core/api-status.ts";
import { sendError, sendJson } from "./respond.ts";

function fakeResponse() {
  const sent: { code?: number; headers?: Record<string, unknown>; body?: string } = {};
  const res = {
    headersSent: false,
    writeHead(code: number, headers: Record<string, unknown>) {
      sent.code = code;
      sent.headers = headers;
    },
    end(body: string) {
      sent.body = body;
    },
  } as unknown as ServerResponse;
  return { res, sent };
}

describe("respond", () => {
  it("writes JSON with warnings as 299 headers", () => {
    const { res, sent } = fakeResponse();
    sendJson(res, 200, { a: 1 }, "application/json", ['unknown field "spec.x"']);
    assert.deepEqual(
      [sent.code, sent.body, sent.headers?.["Warning"]],
      [200, '{"a":1}', ['299 - "unknown field \\"spec.x\\""']],
    );
  });

  it("answers errors with their Status", () => {
    const { res, sent } = fakeResponse();
    sendError(res, apiErrors.forbidden("no"));
    assert.equal(sent.code, 403);
    assert.equal(JSON.parse(sent.body ?? "{}").reason, "Forbidden");
  });
});
