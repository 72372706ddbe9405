// The type names of the router's routing plugins: the words of the router config's `routing` section.
// The router registers each plugin under its name (services/router/routing/plugins), and the operator
// writes them when it turns an InferenceModel's spec.routing into its router's config
// (operator/router/router-config.ts); both read them from here, so neither imports the other.

/** Scorer: the replica that owns the request's prefix-hash key on a bounded-load ring. */
export const CONSISTENT_HASH = "consistent-hash";
/** Scorer: a faster moving average of time to first token scores higher. */
export const LEAST_LATENCY = "least-latency";
/** Scorer: a shorter queue and a less used KV cache score higher. */
export const LOAD = "load";
/** Filter: drops replicas over a load limit. */
export const LOAD_LIMIT = "load-limit";
/** Picker: the highest total score. */
export const MAX_SCORE = "max-score";
/** Picker: cycles through the replicas with the highest score. */
export const ROUND_ROBIN = "round-robin";
/** Picker: uniformly among the replicas with the highest score. */
export const RANDOM = "random";
/** Picker: two at random, the less loaded wins. */
export const POWER_OF_TWO = "power-of-two";
