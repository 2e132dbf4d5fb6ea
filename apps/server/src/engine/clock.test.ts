import { describe, expect, it } from 'vitest';
import { VirtualClock } from './clock';

describe('VirtualClock', () => {
  it('fires timers in (time, insertion) order when advanced, and lets woken tasks schedule more', async () => {
    const clock = new VirtualClock({ startAt: 1_000 });
    const fired: string[] = [];
    void clock.sleep(300).then(() => fired.push(`b@${clock.now()}`));
    void clock.sleep(100).then(async () => {
      fired.push(`a@${clock.now()}`);
      await clock.sleep(100);
      fired.push(`a2@${clock.now()}`);
    });
    void clock.sleep(300).then(() => fired.push(`c@${clock.now()}`));
    await clock.advance(250);
    expect(fired).toEqual(['a@1100', 'a2@1200']);
    expect(clock.now()).toBe(1250);
    await clock.advance(50);
    expect(fired).toEqual(['a@1100', 'a2@1200', 'b@1300', 'c@1300']);
  });

  it('rejects an aborted sleep and never fires it', async () => {
    const clock = new VirtualClock();
    const controller = new AbortController();
    const sleeping = clock.sleep(1_000, controller.signal);
    controller.abort(new Error('stop'));
    await expect(sleeping).rejects.toThrow('stop');
    await expect(clock.sleep(1, controller.signal)).rejects.toThrow('stop');
  });

  it('auto-advances through hours of simulated waiting in milliseconds of wall time', async () => {
    const clock = new VirtualClock({ startAt: 0 });
    const started = performance.now();
    const result = await clock.run(async () => {
      for (let i = 0; i < 100; i++) await clock.sleep(60_000);
      return clock.now();
    });
    expect(result).toBe(6_000_000);
    expect(performance.now() - started).toBeLessThan(2_000);
  });

  it('does not move time while real I/O is tracked, however long it takes', async () => {
    const clock = new VirtualClock({ startAt: 0 });
    const log: string[] = [];
    const slowQuery = () => new Promise<void>((resolve) => setTimeout(resolve, 50));
    await clock.run(
      Promise.all([
        (async () => {
          await clock.track(slowQuery());
          log.push(`query done at ${clock.now()}`);
          await clock.sleep(10);
          log.push(`after query at ${clock.now()}`);
        })(),
        (async () => {
          await clock.sleep(1_000);
          log.push(`other call at ${clock.now()}`);
        })(),
      ]),
    );
    // Without the hold the clock would have jumped to 1000 while the query was in flight.
    expect(log).toEqual(['query done at 0', 'after query at 10', 'other call at 1000']);
  });
});
