// The router core words a bad prompt as the gRPC API spells it (`text: must not be empty`,
// `token_ids[3]: 600 is outside the vocabulary`, `prompt: 600 tokens do not fit the model's
// context`); an OpenAI client sent `prompt` (/v1/completions) or `messages` (/v1/chat/completions),
// so the HTTP door names that field instead, the index kept (`prompt[3]`).
import { Code, TesseraError } from "../../kernel/errors.ts";

const GRPC_PROMPT_FIELD = /^(?:text|token_ids|prompt)(?=[:[])/;

/** A rejection handler that rethrows the core's error with the prompt named as `field`. */
export function promptErrorAs(field: "prompt" | "messages"): (err: unknown) => never {
  return (err) => {
    if (!(err instanceof TesseraError) || err.code !== Code.INVALID_ARGUMENT) throw err;
    if (!GRPC_PROMPT_FIELD.test(err.message)) throw err;
    throw new TesseraError(Code.INVALID_ARGUMENT, err.message.replace(GRPC_PROMPT_FIELD, field));
  };
}
