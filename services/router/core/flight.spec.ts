import assert from "node:assert/strict";
import { FinishReason } from "../../../proto/gen/tessera/v1/inference_pb.js";
import { Code, TesseraError } from "../../kernel/errors.ts";
import { Flight } from "./flight.ts";
import type { RouterEvent } from "./router-events.ts";

const token = (text: string): RouterEvent => ({ type: "tokens", tokens: [], text });
const finish: RouterEvent = {
  type: "finish",
  reason: FinishReason.LENGTH,
  usage: { promptTokens: 1, completionTokens: 2 },
  text: "",
};

/** A producer the test drives by hand. */
function manual() {
  let end: (error?: Error) => void = () => {};
  let signal: AbortSignal | undefined;
  let flight: Flight | undefined;
  const produce = (f: Flight, s: AbortSignal) => {
    flight = f;
    signal = s;
    return new Promise<void>((resolve, reject) => {
      end = (error) => (error ? reject(error) : resolve());
    });
  };
  return {
    produce,
    push: (e: RouterEvent) => flight!.push(e),
    end: (e?: Error) => end(e),
    signal: () => signal,
  };
}

const texts = (events: RouterEvent[]) => events.map((e) => (e.type === "tokens" ? e.text : "<finish>"));

describe("Flight", () => {
  const live = new AbortController().signal;

  it("gives a late reader every event so far, then both follow live", async () => {
    const producer = manual();
    const flight = new Flight(producer.produce);
    flight.join();
    producer.push(token("a"));
    await flight.first(live);
    const early: RouterEvent[] = [];
    const earlyDone = flight.read((e) => early.push(e), live);
    producer.push(token("b"));
    flight.join();
    const late: RouterEvent[] = [];
    const lateDone = flight.read((e) => late.push(e), live);
    producer.push(token("c"));
    producer.push(finish);
    producer.end();
    await Promise.all([earlyDone, lateDone]);
    assert.deepEqual(texts(early), ["a", "b", "c", "<finish>"]);
    assert.deepEqual(texts(late), ["a", "b", "c", "<finish>"]);
  });

  it("rejects first() with the failure when it fails before any event, and read() after events", async () => {
    const before = manual();
    const failed = new Flight(before.produce);
    failed.join();
    before.end(new TesseraError(Code.UNAVAILABLE, "no endpoint"));
    await assert.rejects(failed.first(live), /no endpoint/);

    const after = manual();
    const broken = new Flight(after.produce);
    broken.join();
    after.push(token("a"));
    const seen: RouterEvent[] = [];
    const reading = broken.read((e) => seen.push(e), live);
    after.end(new TesseraError(Code.UNAVAILABLE, "mid-stream"));
    await assert.rejects(reading, /mid-stream/);
    assert.deepEqual(texts(seen), ["a"]);
  });

  it("without keep, holds an event only until its reader has it", async () => {
    const producer = manual();
    const flight = new Flight(producer.produce, { keep: false });
    flight.join();
    producer.push(token("a"));
    producer.push(token("b"));
    await flight.first(live);
    assert.equal(flight.started, true);
    const seen: RouterEvent[] = [];
    const reading = flight.read((e) => seen.push(e), live);
    assert.equal(flight.events.length, 0, "the two events before the reader came are handed over");
    producer.push(token("c"));
    producer.push(finish);
    assert.equal(flight.events.length, 0, "live events go straight to the reader");
    producer.end();
    await reading;
    assert.deepEqual(texts(seen), ["a", "b", "c", "<finish>"]);
  });

  it("aborts the producer when the last reader leaves, not before", async () => {
    const producer = manual();
    const flight = new Flight(producer.produce);
    flight.join();
    flight.join();
    producer.push(token("a"));
    const gone = new AbortController();
    const reading = flight.read(() => {}, gone.signal);
    flight.leave();
    assert.equal(producer.signal()?.aborted, false);
    gone.abort(new TesseraError(Code.CANCELLED, "client left"));
    await assert.rejects(reading, /client left/);
    assert.equal(producer.signal()?.aborted, true);
  });
});
