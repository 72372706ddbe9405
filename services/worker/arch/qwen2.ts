// Qwen2ForCausalLM: Llama with biases on q, k and v (always, whatever attention_bias says) and,
// in the small sizes, embeddings tied to the output head. Sliding window only with use_sliding_window.
import { llamaFamily } from "./llama.ts";

export const qwen2 = llamaFamily("Qwen2ForCausalLM", ["qwen2"], (hf) => ({
  qkvBias: true,
  slidingWindow: hf.use_sliding_window === true ? (hf.sliding_window ?? undefined) : undefined,
}));
