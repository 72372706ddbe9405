// MistralForCausalLM: Llama with an optional sliding attention window (config.sliding_window).
import { llamaFamily } from "./llama.ts";

export const mistral = llamaFamily("MistralForCausalLM", ["mistral"]);
