import { type Clock, systemClock } from '../../clock';

/**
 * The only way the SIP core waits. Transaction timers (A to M), the 100 Trying delay and idle
 * connection reaping all go through it, so a test moves a `VirtualClock` and a 32 s timeout
 * passes in microseconds.
 */
export interface SipTimers {
  /** Milliseconds since the epoch, on the same clock the timers run on. */
  now(): number;
  /** Calls `fn` once after `ms`; the result cancels it (a no-op once it fired). */
  set(ms: number, fn: () => void): () => void;
}

/**
 * Timers over an engine clock. The system clock gets plain setTimeout: a SIP worker keeps
 * thousands of timers pending and most are cancelled, and an AbortController and a promise per
 * timer would only add garbage.
 */
export function createSipTimers(clock: Clock = systemClock): SipTimers {
  if (clock === systemClock) {
    return {
      now: () => Date.now(),
      set(ms, fn) {
        const handle = setTimeout(fn, Math.max(0, ms));
        return () => clearTimeout(handle);
      },
    };
  }
  return {
    now: () => clock.now(),
    set(ms, fn) {
      const controller = new AbortController();
      let cancelled = false;
      clock.sleep(Math.max(0, ms), controller.signal).then(
        () => {
          // The sleep may have resolved in the same batch as the timer that cancelled this one.
          if (!cancelled) fn();
        },
        () => {},
      );
      return () => {
        if (cancelled) return;
        cancelled = true;
        controller.abort();
      };
    },
  };
}
