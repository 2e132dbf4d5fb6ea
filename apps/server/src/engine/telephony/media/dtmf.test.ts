import { describe, expect, it } from 'vitest';
import {
  type DtmfPacket,
  DtmfReceiver,
  DtmfSender,
  decodeTelephoneEvent,
  encodeTelephoneEvent,
  eventOfDigit,
} from './dtmf';

/** Runs the sender for `ticks` ticks starting at `timestamp`, 160 samples apart. */
function run(sender: DtmfSender, ticks: number, timestamp = 1000) {
  const out: Array<{ tick: number; tickTimestamp: number; packet: DtmfPacket | null }> = [];
  for (let tick = 0; tick < ticks; tick++) {
    const tickTimestamp = (timestamp + tick * 160) >>> 0;
    out.push({ tick, tickTimestamp, packet: sender.next(tickTimestamp) });
  }
  return out;
}

describe('RFC 4733 telephone-event payload', () => {
  it('encodes the example layout: event, E bit and volume, 16-bit duration', () => {
    const bytes = encodeTelephoneEvent({ event: 1, end: true, volume: 10, duration: 800 });
    expect([...bytes]).toEqual([0x01, 0x8a, 0x03, 0x20]);
    expect(decodeTelephoneEvent(bytes)).toEqual({ event: 1, end: true, volume: 10, duration: 800 });
    expect(decodeTelephoneEvent(Uint8Array.of(1, 2, 3))).toBeNull();
  });

  it('maps keys to event codes', () => {
    expect(['0', '9', '*', '#', 'a', 'D'].map(eventOfDigit)).toEqual([0, 9, 10, 11, 12, 15]);
    expect(eventOfDigit('x')).toBeNull();
    expect(eventOfDigit('12')).toBeNull();
  });
});

describe('DtmfSender', () => {
  it('sends a key as packets with one timestamp, growing duration and three end packets', () => {
    const sender = new DtmfSender({ toneMs: 100 });
    sender.enqueue('1');
    const ticks = run(sender, 9, 0xffffff60);
    const packets = ticks.filter((t) => t.packet).map((t) => t.packet as DtmfPacket);
    expect(packets).toHaveLength(7);
    expect(new Set(packets.map((p) => p.timestamp))).toEqual(new Set([0xffffff60]));
    expect(packets.map((p) => p.marker)).toEqual([true, false, false, false, false, false, false]);
    const events = packets.map((p) => decodeTelephoneEvent(p.payload));
    expect(events.map((e) => e?.duration)).toEqual([160, 320, 480, 640, 800, 800, 800]);
    expect(events.map((e) => e?.end)).toEqual([false, false, false, false, true, true, true]);
    expect(events.every((e) => e?.event === 1)).toBe(true);
    expect(sender.busy).toBe(false);
  });

  it('leaves audio ticks between two keys and stamps each key with the tick it started on', () => {
    const sender = new DtmfSender({ toneMs: 100, gapMs: 60 });
    let done = false;
    sender.enqueue('1#', () => {
      done = true;
    });
    const ticks = run(sender, 20);
    const kinds = ticks.map((t) => (t.packet ? decodeTelephoneEvent(t.packet.payload)?.event : '-'));
    expect(kinds.join(',')).toBe('1,1,1,1,1,1,1,-,-,-,11,11,11,11,11,11,11,-,-,-');
    expect(ticks[10]?.packet?.timestamp).toBe(ticks[10]?.tickTimestamp);
    expect(ticks[10]?.packet?.marker).toBe(true);
    expect(done).toBe(true);
  });

  it('refuses a character that is not a key, before sending anything', () => {
    const sender = new DtmfSender();
    expect(() => sender.enqueue('12x')).toThrow(/"x"/);
    expect(sender.busy).toBe(false);
  });
});

describe('DtmfReceiver', () => {
  const packetsOf = (digits: string) => {
    const sender = new DtmfSender();
    sender.enqueue(digits);
    return run(sender, 200, 5000)
      .filter((t) => t.packet)
      .map((t) => t.packet as DtmfPacket);
  };

  it('reports one digit per key press despite the redundant end packets', () => {
    const receiver = new DtmfReceiver();
    const digits = packetsOf('1#').map((p) => receiver.receive(p));
    expect(digits.filter(Boolean)).toEqual(['1', '#']);
  });

  it('tells two presses of the same key apart by their timestamps', () => {
    const receiver = new DtmfReceiver();
    expect(
      packetsOf('55')
        .map((p) => receiver.receive(p))
        .filter(Boolean),
    ).toEqual(['5', '5']);
  });

  it('still reports a key whose first packets were lost, and ignores late duplicates', () => {
    const receiver = new DtmfReceiver();
    const packets = packetsOf('79');
    const arrived = [
      ...packets.slice(2, 7),
      packets[1] as DtmfPacket,
      ...packets.slice(7),
      packets[3] as DtmfPacket,
    ];
    expect(arrived.map((p) => receiver.receive(p)).filter(Boolean)).toEqual(['7', '9']);
  });

  it('treats a long key press continued under a new timestamp as the same press', () => {
    const receiver = new DtmfReceiver();
    const payload = (duration: number, end: boolean) =>
      encodeTelephoneEvent({ event: 3, end, volume: 10, duration });
    expect(receiver.receive({ timestamp: 0, marker: true, payload: payload(65535, false) })).toBe('3');
    expect(receiver.receive({ timestamp: 65535, marker: false, payload: payload(800, false) })).toBeNull();
    expect(receiver.receive({ timestamp: 65535, marker: false, payload: payload(1600, true) })).toBeNull();
    expect(receiver.receive({ timestamp: 90000, marker: true, payload: payload(160, false) })).toBe('3');
  });
});
