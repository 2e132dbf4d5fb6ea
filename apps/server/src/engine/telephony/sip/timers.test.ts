import { describe, expect, it } from 'vitest';
import { systemClock, VirtualClock } from '../../clock';
import { createSipTimers } from './timers';

describe('SIP timers', () => {
  it('on a virtual clock fire at their time, and a timer cancelled by one due at the same instant never fires', async () => {
    const clock = new VirtualClock({ startAt: 0 });
    const timers = createSipTimers(clock);
    const fired: string[] = [];
    let cancelSecond = () => {};
    timers.set(500, () => {
      fired.push(`first@${timers.now()}`);
      cancelSecond();
    });
    cancelSecond = timers.set(500, () => fired.push('second'));
    timers.set(32_000, () => fired.push(`timeout@${timers.now()}`));
    await clock.advance(31_999);
    expect(fired).toEqual(['first@500']);
    await clock.advance(1);
    expect(fired).toEqual(['first@500', 'timeout@32000']);
  });

  it('on the system clock run on real time and can be cancelled', async () => {
    const timers = createSipTimers(systemClock);
    const fired: number[] = [];
    const cancel = timers.set(5, () => fired.push(1));
    cancel();
    // Waiting for the later timer rather than a fixed sleep: on a busy machine both are late, in order.
    await new Promise<void>((done) =>
      timers.set(10, () => {
        fired.push(2);
        done();
      }),
    );
    expect(fired).toEqual([2]);
  });
});
