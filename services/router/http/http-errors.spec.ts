import assert from "node:assert/strict";
import { Code, TesseraError } from "../../kernel/errors.ts";
import { errorBody, httpStatus } from "./http-errors.ts";

describe("HTTP errors", () => {
  it("maps gRPC codes to the statuses OpenAI clients expect", () => {
    assert.deepEqual(
      [
        Code.INVALID_ARGUMENT,
        Code.UNAUTHENTICATED,
        Code.NOT_FOUND,
        Code.RESOURCE_EXHAUSTED,
        Code.UNAVAILABLE,
        Code.DEADLINE_EXCEEDED,
        Code.INTERNAL,
      ].map(httpStatus),
      [400, 401, 404, 429, 503, 504, 500],
    );
  });

  it("names the parameter of an invalid-argument error", () => {
    const body = errorBody(TesseraError.invalidArgument("messages.0.content", "must be text"));
    assert.deepEqual(body.error, {
      message: "messages.0.content: must be text",
      type: "invalid_request_error",
      param: "messages.0.content",
      code: "invalid_argument",
    });
    assert.equal(
      errorBody(new TesseraError(Code.RESOURCE_EXHAUSTED, "slow down")).error.type,
      "rate_limit_error",
    );
    assert.equal(errorBody(new TesseraError(Code.UNAVAILABLE, "x")).error.param, null);
  });
});
