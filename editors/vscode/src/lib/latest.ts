/**
 * Search-as-you-type plumbing: a debouncer, and a gate that lets only the newest request's
 * answer through (older ones are cancelled, and their answers ignored if they arrive anyway,
 * possibly out of order).
 */

export interface Timers {
  set(fn: () => void, ms: number): unknown;
  clear(handle: unknown): void;
}

const realTimers: Timers = {
  set: (fn, ms) => setTimeout(fn, ms),
  clear: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

/** Calls `fn` with the last argument once `ms` passed without a new call. */
export class Debouncer<T> {
  private handle: unknown;
  private pending: { value: T } | undefined;

  constructor(
    private readonly ms: number,
    private readonly fn: (value: T) => void,
    private readonly timers: Timers = realTimers,
  ) {}

  call(value: T): void {
    this.cancel();
    this.pending = { value };
    this.handle = this.timers.set(() => {
      this.handle = undefined; // it fired: nothing to clear
      this.flush();
    }, this.ms);
  }

  /** Run the pending call now (e.g. on Enter), if there is one. */
  flush(): void {
    const pending = this.pending;
    this.cancel();
    if (pending) this.fn(pending.value);
  }

  cancel(): void {
    if (this.handle !== undefined) this.timers.clear(this.handle);
    this.handle = undefined;
    this.pending = undefined;
  }

  get isPending(): boolean {
    return this.pending !== undefined;
  }
}

/**
 * Numbers requests; starting one cancels the one before (through `cancel`, e.g. a VS Code
 * CancellationTokenSource's cancel), and only the newest may deliver its answer.
 */
export class LatestGate<H = undefined> {
  private seq = 0;
  private current: { seq: number; handle: H } | undefined;

  constructor(private readonly cancel: (handle: H) => void = () => undefined) {}

  /** Start a request: cancels the previous one (if still open) and returns the new number. */
  begin(handle: H): number {
    if (this.current) this.cancel(this.current.handle);
    this.seq += 1;
    this.current = { seq: this.seq, handle };
    return this.seq;
  }

  isLatest(seq: number): boolean {
    return this.current?.seq === seq;
  }

  /** The request `seq` is over; true if its answer is the newest and should be shown. */
  finish(seq: number): boolean {
    if (!this.isLatest(seq)) return false;
    this.current = undefined;
    return true;
  }

  /** Cancel whatever is open (the view went away, the server restarted). */
  cancelAll(): void {
    if (this.current) this.cancel(this.current.handle);
    this.current = undefined;
  }

  get latest(): number {
    return this.seq;
  }
}

/**
 * The webview's side: it numbers what it sends and shows an answer only if it is for the
 * newest query it sent (the host may still answer an older one that was already running).
 */
export class ReplyFilter {
  private sent = 0;

  next(): number {
    this.sent += 1;
    return this.sent;
  }

  accepts(seq: number): boolean {
    return seq === this.sent;
  }
}
