export interface PollLoop {
  /** New work was queued: look now instead of at the next idle poll. */
  wake(): void;
  /** Stops taking work; resolves when the step in hand has returned. */
  stop(): Promise<void>;
}

/**
 * A background worker's loop: runs `step` while it finds work, and otherwise polls once per
 * `idleMs` (work queued by another process, or left behind by a crash once its lease runs out),
 * or at once when woken by work queued through this process.
 */
export function startPollLoop(
  step: (signal: AbortSignal) => Promise<boolean>,
  options: { idleMs: number; onError: (err: unknown) => void },
): PollLoop {
  const abort = new AbortController();
  let wakeUp: (() => void) | undefined;
  let woken = false;

  const idle = () =>
    new Promise<void>((resolve) => {
      if (woken || abort.signal.aborted) {
        woken = false;
        return resolve();
      }
      const timer = setTimeout(done, options.idleMs);
      function done() {
        clearTimeout(timer);
        wakeUp = undefined;
        woken = false;
        resolve();
      }
      wakeUp = done;
    });

  const loop = (async () => {
    while (!abort.signal.aborted) {
      let worked = false;
      try {
        worked = await step(abort.signal);
      } catch (err) {
        if (!abort.signal.aborted) options.onError(err);
      }
      if (!worked) await idle();
    }
  })();

  return {
    wake() {
      woken = true;
      wakeUp?.();
    },
    async stop() {
      abort.abort();
      wakeUp?.();
      await loop;
    },
  };
}
