import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Debouncer, LatestGate, ReplyFilter, type Timers } from "../../src/lib/latest";

/** Manual timers: `tick(ms)` runs what is due. */
function fakeTimers(): Timers & { tick(ms: number): void; cleared: unknown[] } {
  let now = 0;
  let next = 0;
  const due = new Map<number, { at: number; fn: () => void }>();
  const cleared: unknown[] = [];
  return {
    cleared,
    set(fn, ms) {
      next += 1;
      due.set(next, { at: now + ms, fn });
      return next;
    },
    clear(handle) {
      cleared.push(handle);
      due.delete(handle as number);
    },
    tick(ms) {
      now += ms;
      for (const [id, t] of [...due].sort((a, b) => a[1].at - b[1].at)) {
        if (t.at <= now) {
          due.delete(id);
          t.fn();
        }
      }
    },
  };
}

describe("Debouncer", () => {
  it("calls once with the last value after the quiet period", () => {
    const timers = fakeTimers();
    const seen: string[] = [];
    const d = new Debouncer<string>(150, (v) => seen.push(v), timers);
    d.call("f");
    timers.tick(100);
    d.call("fu");
    timers.tick(100);
    d.call("fus");
    assert.deepEqual(seen, []);
    assert.equal(d.isPending, true);
    timers.tick(150);
    assert.deepEqual(seen, ["fus"]);
    assert.equal(d.isPending, false);
    assert.equal(timers.cleared.length, 2);
  });

  it("flush runs the pending call at once, cancel drops it", () => {
    const timers = fakeTimers();
    const seen: number[] = [];
    const d = new Debouncer<number>(150, (v) => seen.push(v), timers);
    d.call(1);
    d.flush();
    d.flush(); // nothing pending any more
    d.call(2);
    d.cancel();
    timers.tick(1000);
    assert.deepEqual(seen, [1]);
  });

  it("works with the real timers", async () => {
    const seen: string[] = [];
    const d = new Debouncer<string>(20, (v) => seen.push(v));
    d.call("a");
    d.call("b");
    await new Promise((r) => setTimeout(r, 60));
    assert.deepEqual(seen, ["b"]);
  });
});

describe("LatestGate", () => {
  it("cancels the previous request when a new one begins", () => {
    const cancelled: string[] = [];
    const gate = new LatestGate<string>((h) => cancelled.push(h));
    const a = gate.begin("a");
    const b = gate.begin("b");
    assert.deepEqual(cancelled, ["a"]);
    assert.equal(gate.isLatest(a), false);
    assert.equal(gate.isLatest(b), true);
  });

  it("lets only the newest answer through, whatever the order of arrival", async () => {
    const gate = new LatestGate();
    const shown: string[] = [];
    const request = (answer: string, ms: number): Promise<void> => {
      const seq = gate.begin(undefined);
      return new Promise<void>((r) => setTimeout(r, ms)).then(() => {
        if (gate.finish(seq)) shown.push(answer);
      });
    };
    // "fu" is slow and answers after "fus": it must not replace the newer answer.
    await Promise.all([request("f", 5), request("fu", 30), request("fus", 10)]);
    assert.deepEqual(shown, ["fus"]);
  });

  it("does not cancel a finished request, and cancelAll cancels an open one", () => {
    const cancelled: number[] = [];
    const gate = new LatestGate<number>((h) => cancelled.push(h));
    const one = gate.begin(1);
    assert.equal(gate.finish(one), true);
    gate.begin(2);
    assert.deepEqual(cancelled, []);
    gate.cancelAll();
    assert.deepEqual(cancelled, [2]);
    assert.equal(gate.latest, 2);
  });
});

describe("ReplyFilter", () => {
  it("accepts only the answer to the last query sent", () => {
    const f = new ReplyFilter();
    const a = f.next();
    const b = f.next();
    assert.equal(f.accepts(a), false);
    assert.equal(f.accepts(b), true);
    assert.equal(f.accepts(b + 1), false);
  });
});
