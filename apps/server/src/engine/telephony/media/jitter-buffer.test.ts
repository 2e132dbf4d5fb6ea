import { describe, expect, it } from 'vitest';
import { InterarrivalJitter, JitterBuffer, LOST } from './jitter-buffer';

const drain = (buffer: JitterBuffer<number>, ticks: number) =>
  Array.from({ length: ticks }, () => buffer.pop());

describe('JitterBuffer', () => {
  it('holds `depth` packets before playing, then plays in sequence order', () => {
    const buffer = new JitterBuffer<number>({ depth: 3 });
    buffer.push(10, 10);
    buffer.push(12, 12);
    expect(buffer.pop()).toBeNull();
    buffer.push(11, 11);
    expect(drain(buffer, 3)).toEqual([10, 11, 12]);
    expect(buffer.stats).toMatchObject({ received: 3, played: 3, lost: 0, late: 0 });
  });

  it('orders across the 16-bit wrap', () => {
    const buffer = new JitterBuffer<number>({ depth: 3 });
    for (const seq of [65534, 0, 65535, 1]) buffer.push(seq, seq);
    expect(drain(buffer, 4)).toEqual([65534, 65535, 0, 1]);
  });

  it('conceals a missing packet with silence, counts it lost, and drops it when it comes too late', () => {
    const buffer = new JitterBuffer<number>({ depth: 3 });
    for (const seq of [10, 12, 13]) buffer.push(seq, seq);
    expect(drain(buffer, 2)).toEqual([10, LOST]);
    buffer.push(11, 11);
    expect(drain(buffer, 2)).toEqual([12, 13]);
    expect(buffer.stats).toMatchObject({ played: 3, lost: 1, late: 1, duplicates: 0 });
  });

  it('drops duplicates, whether still held or already played', () => {
    const buffer = new JitterBuffer<number>({ depth: 2 });
    buffer.push(1, 1);
    buffer.push(1, 1);
    buffer.push(2, 2);
    expect(buffer.pop()).toBe(1);
    buffer.push(1, 1);
    expect(drain(buffer, 2)).toEqual([2, null]);
    expect(buffer.stats).toMatchObject({ played: 2, duplicates: 2, late: 0, lost: 0 });
  });

  it('skips non-audio entries without spending a tick or counting a loss', () => {
    const buffer = new JitterBuffer<number>({ depth: 3 });
    buffer.push(1, 1);
    buffer.push(2, null);
    buffer.push(3, null);
    buffer.push(4, 4);
    expect(drain(buffer, 2)).toEqual([1, 4]);
    expect(buffer.stats.lost).toBe(0);
  });

  it('keeps latency bounded: past maxDepth the oldest packets are dropped', () => {
    const buffer = new JitterBuffer<number>({ depth: 3, maxDepth: 5 });
    for (let seq = 1; seq <= 8; seq++) buffer.push(seq, seq);
    expect(buffer.size).toBe(5);
    expect(drain(buffer, 5)).toEqual([4, 5, 6, 7, 8]);
    expect(buffer.stats.overflowed).toBe(3);
  });

  it('after running dry, waits for the cushion again instead of counting losses', () => {
    const buffer = new JitterBuffer<number>({ depth: 2 });
    buffer.push(1, 1);
    buffer.push(2, 2);
    expect(drain(buffer, 4)).toEqual([1, 2, null, null]);
    buffer.push(3, 3);
    expect(buffer.pop()).toBeNull();
    buffer.push(4, 4);
    expect(drain(buffer, 2)).toEqual([3, 4]);
    expect(buffer.stats.lost).toBe(0);
  });

  it('counts every packet of a burst loss', () => {
    const buffer = new JitterBuffer<number>({ depth: 3, maxDepth: 5 });
    for (const seq of [1, 2, 3]) buffer.push(seq, seq);
    expect(drain(buffer, 3)).toEqual([1, 2, 3]);
    for (const seq of [14, 15, 16]) buffer.push(seq, seq);
    expect(drain(buffer, 6)).toEqual([LOST, LOST, 14, 15, 16, null]);
    expect(buffer.stats.lost).toBe(10);
  });

  it('starts over when the sequence jumps far (a restarted sender)', () => {
    const buffer = new JitterBuffer<number>({ depth: 1 });
    buffer.push(100, 100);
    expect(buffer.pop()).toBe(100);
    buffer.push(544, 544);
    expect(buffer.pop()).toBe(544);
    expect(buffer.stats).toMatchObject({ resets: 1, lost: 0 });
  });
});

describe('InterarrivalJitter (RFC 3550 A.8)', () => {
  it('is zero for packets arriving exactly as sent', () => {
    const jitter = new InterarrivalJitter();
    for (let i = 0; i < 50; i++) jitter.update((0xffffff00 + i * 160) >>> 0, 1000 + i * 20);
    expect(jitter.ms).toBe(0);
  });

  it('converges on the mean deviation of the arrival spacing', () => {
    const jitter = new InterarrivalJitter();
    // Every other packet arrives 5 ms late: each spacing is off by 5 ms.
    for (let i = 0; i < 300; i++) jitter.update(i * 160, i * 20 + (i % 2) * 5);
    expect(jitter.ms).toBeCloseTo(5, 1);
    expect(jitter.units).toBeCloseTo(40, 0);
  });
});
