// The architectures Tessera ships with. Importing this module registers them.
import { llama } from "./llama.ts";
import { mistral } from "./mistral.ts";
import { mixtral } from "./mixtral.ts";
import { qwen2 } from "./qwen2.ts";
import { registerArchitecture } from "./registry.ts";

for (const def of [llama, mistral, qwen2, mixtral]) registerArchitecture(def);
