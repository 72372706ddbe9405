import assert from "node:assert/strict";
import { Code, TesseraError } from "../../kernel/errors.ts";
import { isAuthError, redisError } from "./redis-errors.ts";

function replyError(message: string): Error {
  const err = new Error(message);
  Object.defineProperty(err, "name", { value: "ReplyError" });
  return err;
}

describe("redisError", () => {
  it("maps connection failures to UNAVAILABLE and keeps the cause", () => {
    const cause = new Error("Connection is closed.");
    const err = redisError(cause, "get");
    assert.equal(err.code, Code.UNAVAILABLE);
    assert.equal(err.cause, cause);
    assert.match(err.message, /^KV store get: Redis unreachable: Connection is closed\.$/);
  });

  it("maps reply errors by what the server said", () => {
    assert.equal(redisError(replyError("OOM command not allowed"), "put").code, Code.RESOURCE_EXHAUSTED);
    assert.equal(
      redisError(replyError("WRONGPASS invalid username-password pair"), "put").code,
      Code.UNAVAILABLE,
    );
    assert.equal(redisError(replyError("LOADING Redis is loading"), "get").code, Code.UNAVAILABLE);
    assert.equal(redisError(replyError("WRONGTYPE Operation against a key"), "get").code, Code.INTERNAL);
    assert.ok(isAuthError(replyError("NOAUTH Authentication required.")));
    assert.ok(!isAuthError(new Error("NOAUTH but not a reply")));
  });

  it("passes TesseraErrors through", () => {
    const err = new TesseraError(Code.DEADLINE_EXCEEDED, "late");
    assert.equal(redisError(err, "get"), err);
  });
});
