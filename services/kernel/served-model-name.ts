// The name a model is served as: the id clients send (tessera.v1 GenerateRequest.model, OpenAI's
// `model`), what workers report in ListModels and routers list in /v1/models. One rule for every place
// that takes one (`tessera serve --served-model-name`, the InferenceModel's spec.model.servedName, the
// router's config), so a name the operator accepts is a name the worker serves. vLLM takes any string;
// ours is narrower because the name also goes where text has structure: a Redis key of KV blocks is
// `<prefix><name>@<revision>:...` and a model's keys are found by the prefix `<prefix><name>@` (so no
// "@"), it is a metrics label, a log field and a path segment of GET /v1/models/<name> (so no spaces or
// control characters). Hugging Face ids fit: "Qwen2.5-0.5B-Instruct", "meta-llama/Llama-3.1-8B",
// and so do Ollama-style tags ("llama3:8b").

/** Letters, digits and . _ : / -, starting with a letter or digit (the CRD's pattern, too). */
export const SERVED_MODEL_NAME_PATTERN = "^[A-Za-z0-9][A-Za-z0-9._:/-]*$";
export const SERVED_MODEL_NAME_MAX_LENGTH = 256;

const pattern = new RegExp(SERVED_MODEL_NAME_PATTERN);

/** Why `name` cannot be served as a model's name, or undefined when it can. */
export function servedModelNameProblem(name: string): string | undefined {
  if (name === "") return "must not be empty";
  if (name.length > SERVED_MODEL_NAME_MAX_LENGTH)
    return `must be at most ${SERVED_MODEL_NAME_MAX_LENGTH} characters`;
  if (!pattern.test(name))
    return `${JSON.stringify(name)} is not a model name: use letters, digits and . _ : / -, starting with a letter or digit`;
  return undefined;
}
