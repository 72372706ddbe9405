// The models of the router, found by the name a request gives ("" means the only model). Each model's
// worker-reported info comes from the first endpoint by name that serves it, so every router over the
// same endpoints uses the same revision (and so the same routing keys) even mid rolling update.
import { type Result, TesseraError } from "../../kernel/errors.ts";
import type { Endpoint } from "../endpoints/endpoint.ts";
import { type RouterModel, workerModelInfo } from "./router-model.ts";

export class ModelRegistry {
  readonly models: readonly RouterModel[];

  constructor(models: readonly RouterModel[]) {
    this.models = models;
  }

  resolve(name: string): Result<RouterModel> {
    if (name === "") {
      const only = this.models.length === 1 ? this.models[0] : undefined;
      if (only) return { value: only };
      return {
        error: TesseraError.invalidArgument(
          "model",
          `required: this router serves ${this.models.map((m) => m.id).join(", ")}`,
        ),
      };
    }
    const model = this.models.find((m) => m.id === name);
    if (model) return { value: model };
    return {
      error: TesseraError.notFound(
        `model "${name}" is not served here (serving ${this.models.map((m) => m.id).join(", ")})`,
      ),
    };
  }

  /** Takes each model's info from the first endpoint (by name) that reported serving it. */
  update(endpoints: readonly Endpoint[]): void {
    const byName = [...endpoints].sort((a, b) => a.name.localeCompare(b.name));
    for (const model of this.models) {
      for (const endpoint of byName) {
        const info = endpoint.models?.find((m) => m.id === model.id);
        if (info === undefined) continue;
        model.info = workerModelInfo(info, model.tokenizer.eosTokenId);
        break;
      }
    }
  }
}
