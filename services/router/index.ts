// The router's public entry: what the CLI (`tessera router`) needs to start it. Nothing else outside
// services/router imports the router (scripts/import-direction.ts).
export { loadRouterConfig, parseRouterConfigJson, type RouterConfig } from "./config/router-config.ts";
export type { RouterEvent } from "./core/router-events.ts";
// The OpenAI request parsing and response shaping, for `tessera batch`'s in-process engine, so that a
// batch line is validated and answered exactly as the router's HTTP door does it.
export { errorBody, httpStatus } from "./http/http-errors.ts";
export {
  OPENAI_SAMPLING_DEFAULTS,
  type OpenAiRequest,
  parseChatRequest,
  parseCompletionRequest,
} from "./http/openai-request.ts";
export { type ResponseContext, responseBody } from "./http/openai-response.ts";
export { runRouter } from "./run-router.ts";
