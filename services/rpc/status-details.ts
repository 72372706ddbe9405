// A gRPC status message travels as the grpc-message trailer, percent-encoded, and errors echo what the
// client sent (a model name, a chat_template_kwargs key): a 200,000-character model name made a trailer
// of megabytes, which the client's HTTP/2 session refused as a protocol error, failing every other
// call on that connection too. Status messages are cut to MAX_STATUS_DETAILS characters (at most
// about 9 KB encoded) and made well-formed (a lone surrogate cannot be percent-encoded).
export const MAX_STATUS_DETAILS = 1_000;

export function statusDetails(message: string): string {
  const whole = message.toWellFormed();
  if (whole.length <= MAX_STATUS_DETAILS) return whole;
  return `${whole.slice(0, MAX_STATUS_DETAILS).toWellFormed()}… (${whole.length} characters, cut)`;
}
