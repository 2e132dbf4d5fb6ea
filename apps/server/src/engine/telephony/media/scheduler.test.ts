import { describe, expect, it } from 'vitest';
import { VirtualClock } from '../../clock';
import { DeadlineScheduler, type TickTimeSource } from './scheduler';

/** A virtual clock the test can push ahead of its timers, as a thread that stalled would see it. */
function stallableTime() {
  const clock = new VirtualClock({ startAt: 0 });
  let stalled = 0;
  const time: TickTimeSource = {
    now: () => clock.now() + stalled,
    sleep: (ms, signal) => clock.sleep(ms, signal),
  };
  return { clock, time, stall: (ms: number) => (stalled += ms) };
}

describe('DeadlineScheduler', () => {
  it('runs tick n at start + n × 20 ms, without drift', async () => {
    const { clock, time } = stallableTime();
    const runs: Array<[number, number]> = [];
    const scheduler = new DeadlineScheduler((tick) => runs.push([tick, time.now()]), { time });
    scheduler.start();
    await clock.advance(10_000);
    scheduler.stop();
    expect(runs).toHaveLength(501);
    expect(runs.every(([tick, at]) => at === tick * 20)).toBe(true);
    expect(scheduler.stats).toMatchObject({ ticks: 501, lateTicks: 0, latenessMaxMs: 0 });
  });

  it('after a stall runs every missed tick at once, so none is skipped', async () => {
    const { clock, time, stall } = stallableTime();
    const runs: Array<[number, number]> = [];
    const scheduler = new DeadlineScheduler(
      (tick) => {
        runs.push([tick, time.now()]);
        if (tick === 5) stall(70);
      },
      { time },
    );
    scheduler.start();
    await clock.advance(200);
    scheduler.stop();
    expect(runs.map(([tick]) => tick)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13]);
    // Ticks 6-8 were due at 120, 140 and 160 ms; the thread came back at 170.
    expect(runs.slice(6, 9).map(([, at]) => at)).toEqual([170, 170, 170]);
    // Then it is back on the original grid rather than 20 ms after the catch-up.
    expect(runs[9]).toEqual([9, 180]);
    const stats = scheduler.stats;
    expect(stats.lateTicks).toBe(2);
    expect(stats.latenessMaxMs).toBe(50);
    expect(stats.latenessP99Ms).toBeGreaterThanOrEqual(30);
    expect(stats.latenessP99Ms).toBeLessThanOrEqual(50);
  });

  it('keeps ticking when a tick throws, and reports the error', async () => {
    const { clock, time } = stallableTime();
    const errors: unknown[] = [];
    let count = 0;
    const scheduler = new DeadlineScheduler(
      (tick) => {
        count++;
        if (tick === 2) throw new Error('boom');
      },
      { time, onError: (err) => errors.push(err) },
    );
    scheduler.start();
    await clock.advance(100);
    scheduler.stop();
    expect(count).toBe(6);
    expect(errors).toHaveLength(1);
  });

  it('stops ticking when stopped, leaving no timer behind', async () => {
    const { clock, time } = stallableTime();
    let count = 0;
    const scheduler = new DeadlineScheduler(() => count++, { time });
    scheduler.start();
    await clock.advance(50);
    scheduler.stop();
    await clock.advance(100);
    expect(count).toBe(3);
    expect(scheduler.running).toBe(false);
    expect(clock.pendingTimers).toBe(0);
  });

  it('on real time, runs no tick early and misses none', async () => {
    const at: number[] = [];
    const scheduler = new DeadlineScheduler(() => at.push(performance.now()));
    // The scheduler's own start is at or after this: measuring from tick 0's run instead would
    // call a punctual tick early whenever the first one ran a little late (a loaded machine).
    const startedAt = performance.now();
    scheduler.start();
    await new Promise((resolve) => setTimeout(resolve, 210));
    const stoppedAt = performance.now();
    scheduler.stop();
    const first = at[0] as number;
    at.forEach((t, n) => {
      expect(t - (startedAt + n * 20)).toBeGreaterThanOrEqual(-0.5);
    });
    // However loaded the machine, every tick due before the stop has run (late ones catch up).
    expect(at.length).toBeGreaterThanOrEqual(Math.floor((stoppedAt - first) / 20));
    expect(at.length).toBeLessThanOrEqual(Math.floor((stoppedAt - startedAt) / 20) + 1);
  });
});
