// Counters and histograms for what a server records per request: each series (one set of label
// values) is an object the caller asks for once and keeps, and a record is an add into it. An
// OpenTelemetry record hashes its attributes every time (their keys sorted, then a JSON string): ~10
// records per request were 7 KB of the router's garbage per request and tens of µs of a request's
// first-token path at 1 concurrent (issue 22). The series reach /metrics through the Prometheus
// reader as a MetricProducer, in the same exposition as the SDK's instruments (cumulative).
import { type Attributes, ValueType } from "@opentelemetry/api";
import { hrTime } from "@opentelemetry/core";
import { emptyResource } from "@opentelemetry/resources";
import {
  AggregationTemporality,
  type CollectionResult,
  DataPointType,
  type MetricData,
  type MetricProducer,
} from "@opentelemetry/sdk-metrics";

export interface InstrumentOptions {
  description: string;
  unit?: string;
  /** The label names `at` takes values for, in that order (up to three). */
  labels?: readonly string[];
}

/** One series of a counter: its label values fixed. */
export class CounterSeries {
  value = 0;

  add(n: number): void {
    if (n > 0) this.value += n;
  }
}

/** One series of a histogram: counts per bucket (the last past every boundary), sum, min, max. */
export class HistogramSeries {
  readonly counts: number[];
  count = 0;
  sum = 0;
  min = Number.POSITIVE_INFINITY;
  max = Number.NEGATIVE_INFINITY;
  readonly #boundaries: readonly number[];

  constructor(boundaries: readonly number[]) {
    this.#boundaries = boundaries;
    this.counts = new Array<number>(boundaries.length + 1).fill(0);
  }

  record(value: number): void {
    if (!Number.isFinite(value)) return;
    const boundaries = this.#boundaries;
    // Boundaries are inclusive upper bounds (OpenTelemetry's and Prometheus's `le`).
    let bucket = 0;
    while (bucket < boundaries.length && value > boundaries[bucket]!) bucket++;
    this.counts[bucket]!++;
    this.count++;
    this.sum += value;
    if (value < this.min) this.min = value;
    if (value > this.max) this.max = value;
  }
}

abstract class Instrument<S> {
  readonly name: string;
  readonly options: InstrumentOptions;
  readonly #series = new Map<string, { attributes: Attributes; series: S }>();
  /** Series by their label values, one Map per label (unused labels keyed ""). */
  readonly #byValue = new Map<string, Map<string, Map<string, S>>>();

  constructor(name: string, options: InstrumentOptions) {
    if ((options.labels?.length ?? 0) > 3) throw new Error(`${name}: more than three labels`);
    this.name = name;
    this.options = options;
  }

  /**
   * The series of these values of the instrument's `labels`, in their order. Found through a Map per
   * label, so a record allocates nothing once its series exists: for what is recorded per request.
   */
  at(a: string, b = "", c = ""): S {
    let second = this.#byValue.get(a);
    if (second === undefined) {
      second = new Map();
      this.#byValue.set(a, second);
    }
    let third = second.get(b);
    if (third === undefined) {
      third = new Map();
      second.set(b, third);
    }
    let series = third.get(c);
    if (series === undefined) {
      const values = [a, b, c];
      series = this.series(
        Object.fromEntries((this.options.labels ?? []).map((name, i) => [name, values[i]])),
      );
      third.set(c, series);
    }
    return series;
  }

  /** The series of these label values, made on first use; keep it and record into it. */
  series(attributes: Attributes): S {
    const key = JSON.stringify(Object.entries(attributes).sort(([a], [b]) => (a < b ? -1 : 1)));
    let entry = this.#series.get(key);
    if (entry === undefined) {
      entry = { attributes: { ...attributes }, series: this.create() };
      this.#series.set(key, entry);
    }
    return entry.series;
  }

  get all(): readonly { attributes: Attributes; series: S }[] {
    return [...this.#series.values()];
  }

  protected abstract create(): S;
}

export class AggregatedCounter extends Instrument<CounterSeries> {
  protected create(): CounterSeries {
    return new CounterSeries();
  }
}

export class AggregatedHistogram extends Instrument<HistogramSeries> {
  readonly boundaries: readonly number[];

  constructor(name: string, options: InstrumentOptions & { boundaries: readonly number[] }) {
    super(name, options);
    this.boundaries = [...options.boundaries].sort((a, b) => a - b);
  }

  protected create(): HistogramSeries {
    return new HistogramSeries(this.boundaries);
  }
}

/** The instruments of one scope (a component), and their series for the Prometheus reader. */
export class AggregatedInstruments implements MetricProducer {
  readonly #scope: string;
  readonly #started = hrTime();
  readonly #instruments: (AggregatedCounter | AggregatedHistogram)[] = [];

  constructor(scope: string) {
    this.#scope = scope;
  }

  counter(name: string, options: InstrumentOptions): AggregatedCounter {
    const counter = new AggregatedCounter(name, options);
    this.#instruments.push(counter);
    return counter;
  }

  histogram(
    name: string,
    options: InstrumentOptions & { boundaries: readonly number[] },
  ): AggregatedHistogram {
    const histogram = new AggregatedHistogram(name, options);
    this.#instruments.push(histogram);
    return histogram;
  }

  async collect(): Promise<CollectionResult> {
    const startTime = this.#started;
    const endTime = hrTime();
    const metrics: MetricData[] = this.#instruments.map((instrument) => {
      const descriptor = {
        name: instrument.name,
        description: instrument.options.description,
        unit: instrument.options.unit ?? "",
        valueType: ValueType.DOUBLE,
      };
      if (instrument instanceof AggregatedCounter)
        return {
          descriptor,
          aggregationTemporality: AggregationTemporality.CUMULATIVE,
          dataPointType: DataPointType.SUM,
          isMonotonic: true,
          dataPoints: instrument.all.map(({ attributes, series }) => ({
            attributes,
            startTime,
            endTime,
            value: series.value,
          })),
        };
      const boundaries = [...instrument.boundaries];
      return {
        descriptor,
        aggregationTemporality: AggregationTemporality.CUMULATIVE,
        dataPointType: DataPointType.HISTOGRAM,
        dataPoints: instrument.all.map(({ attributes, series }) => ({
          attributes,
          startTime,
          endTime,
          value: {
            buckets: { boundaries, counts: [...series.counts] },
            count: series.count,
            sum: series.sum,
            ...(series.count > 0 && { min: series.min, max: series.max }),
          },
        })),
      };
    });
    return {
      resourceMetrics: {
        resource: emptyResource(),
        scopeMetrics: [{ scope: { name: this.#scope }, metrics }],
      },
      errors: [],
    };
  }
}
