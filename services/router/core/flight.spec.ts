import assert from "node:assert/strict";
import { FinishReason } from "../../../proto/gen/tessera/v1/inference_pb.js";
import { Code, TesseraError } from "../../common/errors.ts";
import { Flight } from "./flight.ts";
import type { RouterEvent } from "./router-events.ts";

const token = (text: string): RouterEvent => ({ type: "tokens", tokens: [], text });
const finish: RouterEvent = {
  type: "finish",
  reason: FinishReason.LENGTH,
  usage: { promptTokens: 1, completionTokens: 2 },
  text: "",
};

/** A producer the test feeds by hand. */
function manualProducer() {
  const queue: (RouterEvent | Error | null)[] = [];
  let wake = () => {};
  let signal: AbortSignal | undefined;
  const push = (item: RouterEvent | Error | null) => {
    queue.push(item);
    wake();
  };
  async function* produce(s: AbortSignal): AsyncIterable<RouterEvent> {
    signal = s;
    for (;;) {
      while (queue.length === 0) await new Promise<void>((resolve) => (wake = resolve));
      const item = queue.shift();
      if (item === null || item === undefined) return;
      if (item instanceof Error) throw item;
      yield item;
    }
  }
  return { produce, push, signal: () => signal };
}

async function collect(iterable: AsyncIterable<RouterEvent>): Promise<string[]> {
  const texts: string[] = [];
  for await (const event of iterable) texts.push(event.type === "tokens" ? event.text : "<finish>");
  return texts;
}

describe("Flight", () => {
  const live = new AbortController().signal;

  it("replays the events so far to a late reader, then both follow live", async () => {
    const producer = manualProducer();
    const flight = new Flight(producer.produce);
    flight.join();
    producer.push(token("a"));
    await flight.first(live);
    const early = collect(flight.read(live));
    producer.push(token("b"));
    await new Promise((resolve) => setImmediate(resolve));
    flight.join();
    const late = collect(flight.read(live));
    producer.push(token("c"));
    producer.push(finish);
    producer.push(null);
    assert.deepEqual(await early, ["a", "b", "c", "<finish>"]);
    assert.deepEqual(await late, ["a", "b", "c", "<finish>"]);
  });

  it("rejects first() with the failure when it fails before any event", async () => {
    const producer = manualProducer();
    const flight = new Flight(producer.produce);
    flight.join();
    producer.push(new TesseraError(Code.UNAVAILABLE, "no endpoint"));
    await assert.rejects(flight.first(live), /no endpoint/);
  });

  it("cancels the producer when the last reader leaves, not before", async () => {
    const producer = manualProducer();
    const flight = new Flight(producer.produce);
    flight.join();
    flight.join();
    producer.push(token("a"));
    await flight.first(live);
    const gone = new AbortController();
    const reading = collect(flight.read(gone.signal));
    flight.leave();
    assert.equal(producer.signal()?.aborted, false);
    gone.abort(new TesseraError(Code.CANCELLED, "client left"));
    await assert.rejects(reading, /client left/);
    assert.equal(producer.signal()?.aborted, true);
  });
});
