// The router renders chat prompts with the same ChatTemplate the workers use (services/inference, so
// both front doors answer a conversation alike); this module keeps the router's name for it.
export { type ChatMessage, type ChatOptions, ChatTemplate } from "../../inference/chat-template.ts";
