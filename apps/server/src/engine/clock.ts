/**
 * Time as the engine sees it. Calls wait for ring time, speech and silence through the clock,
 * so a simulated clock can run a day of calls in seconds and a test is deterministic.
 */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  /** Resolves after `ms` of this clock's time; rejects with the signal's reason when aborted. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  sleep: (ms, signal) =>
    new Promise<void>((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason);
      const timer = setTimeout(() => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      }, ms);
      const onAbort = () => {
        clearTimeout(timer);
        reject(signal?.reason);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
    }),
};

interface Timer {
  at: number;
  seq: number;
  resolve: () => void;
  cancelled: boolean;
}

const before = (a: Timer, b: Timer) => a.at < b.at || (a.at === b.at && a.seq < b.seq);

/** A binary min-heap on (time, insertion order): 1,000 calls keep thousands of timers pending. */
class TimerHeap {
  private items: Timer[] = [];

  get size() {
    return this.items.length;
  }

  peek(): Timer | undefined {
    return this.items[0];
  }

  push(timer: Timer) {
    const items = this.items;
    items.push(timer);
    let i = items.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!before(items[i] as Timer, items[parent] as Timer)) break;
      [items[i], items[parent]] = [items[parent] as Timer, items[i] as Timer];
      i = parent;
    }
  }

  pop(): Timer | undefined {
    const items = this.items;
    const top = items[0];
    const last = items.pop();
    if (items.length > 0 && last) {
      items[0] = last;
      let i = 0;
      for (;;) {
        const left = 2 * i + 1;
        const right = left + 1;
        let smallest = i;
        if (left < items.length && before(items[left] as Timer, items[smallest] as Timer)) smallest = left;
        if (right < items.length && before(items[right] as Timer, items[smallest] as Timer)) smallest = right;
        if (smallest === i) break;
        [items[i], items[smallest]] = [items[smallest] as Timer, items[i] as Timer];
        i = smallest;
      }
    }
    return top;
  }
}

const nextMacrotask = () => new Promise<void>((resolve) => setImmediate(resolve));

export interface VirtualClockOptions {
  /** Start time, ms since the epoch (default 2025-01-01T00:00:00+08:00). */
  startAt?: number;
  /**
   * Auto-advance jumps only after this many consecutive setImmediate turns in which nothing
   * happened (no timer added, none fired, no hold taken). Default 3.
   */
  idleTurns?: number;
}

/**
 * Simulated time for tests, the bench and seeding the demo: `sleep` resolves when the clock is
 * moved past its deadline, timers fire in (time, insertion) order, so a run is deterministic.
 *
 * Two ways to move time:
 * - `advance(ms)` for unit tests: fires every timer due within `ms`, letting each woken task
 *   run (and schedule more) before the next fires.
 * - `run(promise)` / `autoAdvance()`: jump to the next timer whenever the process is idle.
 *
 * Idleness is the delicate part. Promise-only work finishes inside one macrotask turn, but real
 * I/O (a PGlite query, a file write, an HTTP request) completes in a later turn, and jumping while
 * it is in flight would make a call's time leap ahead of its own database writes. A heuristic
 * ("N quiet setImmediate turns") cannot see I/O, so the clock offers an explicit busy counter:
 * wrap real I/O made during simulated calls in `track(promise)` (or `hold()`/release), and time
 * stands still until it settles. The N quiet turns (`idleTurns`) remain as a cheap guard for
 * short untracked work, but only the busy counter is a guarantee.
 */
export class VirtualClock implements Clock {
  private current: number;
  private seq = 0;
  private readonly timers = new TimerHeap();
  private busy = 0;
  /** Bumped by anything that shows the process is not idle; the auto-advance loop compares it. */
  private activity = 0;
  private autoUsers = 0;
  private looping = false;
  private readonly idleTurns: number;

  constructor(options: VirtualClockOptions = {}) {
    this.current = options.startAt ?? Date.parse('2025-01-01T00:00:00+08:00');
    this.idleTurns = Math.max(1, options.idleTurns ?? 3);
  }

  now(): number {
    return this.current;
  }

  /** Timers not yet fired (cancelled ones may still be counted until they reach the top). */
  get pendingTimers(): number {
    return this.timers.size;
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason);
      const timer: Timer = {
        at: this.current + Math.max(0, ms),
        seq: this.seq++,
        cancelled: false,
        resolve: () => {
          signal?.removeEventListener('abort', onAbort);
          resolve();
        },
      };
      const onAbort = () => {
        timer.cancelled = true;
        reject(signal?.reason);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.timers.push(timer);
      this.activity++;
      this.kick();
    });
  }

  /** Moves time forward by `ms`, firing due timers in order and letting woken tasks react. */
  async advance(ms: number): Promise<void> {
    const target = this.current + Math.max(0, ms);
    for (;;) {
      await this.settle();
      const next = this.nextLive();
      if (!next || next.at > target) break;
      this.fireBatch();
    }
    this.current = Math.max(this.current, target);
    await this.settle();
  }

  /** Marks the process busy (real I/O in flight): auto-advance waits. Call the result to release. */
  hold(): () => void {
    this.busy++;
    this.activity++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.busy--;
      this.activity++;
      this.kick();
    };
  }

  /** Holds the clock until `promise` settles; returns it. */
  async track<T>(promise: Promise<T>): Promise<T> {
    const release = this.hold();
    try {
      return await promise;
    } finally {
      release();
    }
  }

  /** Advances automatically until the returned function is called. */
  autoAdvance(): () => void {
    this.autoUsers++;
    this.kick();
    let stopped = false;
    return () => {
      if (stopped) return;
      stopped = true;
      this.autoUsers--;
    };
  }

  /** Runs `work` with auto-advance on and resolves with its result. */
  async run<T>(work: Promise<T> | (() => Promise<T>)): Promise<T> {
    const stop = this.autoAdvance();
    try {
      return await (typeof work === 'function' ? work() : work);
    } finally {
      stop();
    }
  }

  private nextLive(): Timer | undefined {
    let top = this.timers.peek();
    while (top?.cancelled) {
      this.timers.pop();
      top = this.timers.peek();
    }
    return top;
  }

  /** Fires every timer due at the earliest pending time, in insertion order. */
  private fireBatch() {
    const first = this.nextLive();
    if (!first) return;
    this.current = Math.max(this.current, first.at);
    for (let top = this.nextLive(); top && top.at <= this.current; top = this.nextLive()) {
      this.timers.pop();
      top.resolve();
    }
    this.activity++;
  }

  private async settle() {
    for (let i = 0; i < this.idleTurns; i++) await nextMacrotask();
  }

  /** Starts the auto-advance loop if it is wanted and not running. */
  private kick() {
    if (this.looping || this.autoUsers === 0 || this.busy > 0) return;
    this.looping = true;
    void this.loop();
  }

  private async loop() {
    let quiet = 0;
    let seen = this.activity;
    // The loop stops itself when auto-advance is off, something holds the clock (release()
    // restarts it) or no timer is left (the next sleep() restarts it), so it never spins idle.
    while (this.autoUsers > 0 && this.busy === 0 && this.nextLive()) {
      await nextMacrotask();
      if (this.activity !== seen) {
        seen = this.activity;
        quiet = 0;
        continue;
      }
      if (++quiet < this.idleTurns || this.busy > 0) continue;
      quiet = 0;
      this.fireBatch();
      seen = this.activity;
    }
    this.looping = false;
  }
}

/**
 * An abort signal for one request: it fires when `timeoutMs` passes on `clock` or when the
 * caller's own signal does. `timedOut()` tells the two apart afterwards; `dispose()` stops the
 * timer and lets go of the caller's signal once the request settled.
 */
export function clockDeadline(clock: Clock, timeoutMs: number, caller?: AbortSignal) {
  const request = new AbortController();
  const stopTimer = new AbortController();
  let timedOut = false;
  const onCallerAbort = () => request.abort(caller?.reason);
  caller?.addEventListener('abort', onCallerAbort, { once: true });
  clock.sleep(timeoutMs, stopTimer.signal).then(
    () => {
      timedOut = true;
      request.abort();
    },
    () => {},
  );
  return {
    signal: request.signal,
    timedOut: () => timedOut,
    dispose() {
      stopTimer.abort();
      caller?.removeEventListener('abort', onCallerAbort);
    },
  };
}
