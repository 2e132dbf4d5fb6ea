import { timestampDelta } from './rtp';

/**
 * DTMF as RFC 4733 telephone events: what to send tick by tick, and one digit per event received.
 * Carriers and PBXs mostly strip in-band tones, so digits travel as their own RTP payload type,
 * whichever dynamic number the SDP gave it.
 */

/** Event codes 0-15 in order (RFC 4733 §3.2). */
const DTMF_DIGITS = '0123456789*#ABCD';

export interface TelephoneEvent {
  event: number;
  end: boolean;
  /** Power level in -dBm0, 0-63. */
  volume: number;
  /** In timestamp units (1/8000 s for G.711). */
  duration: number;
}

export function encodeTelephoneEvent(e: TelephoneEvent): Uint8Array {
  return Uint8Array.of(
    e.event & 0xff,
    (e.end ? 0x80 : 0) | (e.volume & 0x3f),
    (e.duration >> 8) & 0xff,
    e.duration & 0xff,
  );
}

export function decodeTelephoneEvent(payload: Uint8Array): TelephoneEvent | null {
  if (payload.length < 4) return null;
  const flags = payload[1] as number;
  return {
    event: payload[0] as number,
    end: (flags & 0x80) !== 0,
    volume: flags & 0x3f,
    duration: ((payload[2] as number) << 8) | (payload[3] as number),
  };
}

export const digitOfEvent = (event: number): string | null => DTMF_DIGITS[event] ?? null;

/** The event code of a digit (case-insensitive for A-D), or null when it is not a DTMF key. */
export function eventOfDigit(digit: string): number | null {
  const index = DTMF_DIGITS.indexOf(digit.toUpperCase());
  return digit.length === 1 && index >= 0 ? index : null;
}

/** The first character of `digits` that is not a DTMF key, or null when all are. */
export function invalidDtmfDigit(digits: string): string | null {
  for (const ch of digits) if (eventOfDigit(ch) === null) return ch;
  return null;
}

export interface DtmfPacket {
  payload: Uint8Array;
  /** The event's RTP timestamp: the same for every packet of one digit. */
  timestamp: number;
  marker: boolean;
}

export interface DtmfSenderOptions {
  /** How long each key is held. */
  toneMs?: number;
  /** Time between two keys, during which audio (or silence) is sent. */
  gapMs?: number;
  ptimeMs?: number;
  clockRate?: number;
  volume?: number;
}

/** The end packet is sent three times in all (RFC 4733 §2.5.1.4), since it is not acknowledged. */
const END_PACKETS = 3;

interface Pending {
  event: number;
  /** Gap ticks still owed before this digit starts. */
  gapTicks: number;
  done?: () => void;
}

/**
 * Turns queued digits into one packet per tick. For each digit: the first packet carries the
 * marker, every packet repeats the timestamp of the tick the key went down, the duration grows
 * by one packet time each tick, and the last three packets carry the end bit.
 */
export class DtmfSender {
  private readonly toneTicks: number;
  private readonly gapTicks: number;
  private readonly samplesPerTick: number;
  private readonly volume: number;
  private readonly queue: Pending[] = [];
  private current: { event: number; timestamp: number; sent: number; done?: () => void } | null = null;

  constructor(options: DtmfSenderOptions = {}) {
    const ptime = options.ptimeMs ?? 20;
    this.toneTicks = Math.max(1, Math.round((options.toneMs ?? 100) / ptime));
    this.gapTicks = Math.max(1, Math.round((options.gapMs ?? 60) / ptime));
    this.samplesPerTick = ((options.clockRate ?? 8000) * ptime) / 1000;
    this.volume = options.volume ?? 10;
  }

  /** Queues `digits` (all must be DTMF keys); `done` runs once the last one's end packets went out. */
  enqueue(digits: string, done?: () => void): void {
    const bad = invalidDtmfDigit(digits);
    if (bad !== null) throw new RangeError(`not a DTMF key: ${JSON.stringify(bad)}`);
    if (digits.length === 0) {
      done?.();
      return;
    }
    const chars = [...digits];
    chars.forEach((digit, i) => {
      const first = this.queue.length === 0 && !this.current;
      this.queue.push({
        event: eventOfDigit(digit) as number,
        gapTicks: first ? 0 : this.gapTicks,
        done: i === chars.length - 1 ? done : undefined,
      });
    });
  }

  get busy(): boolean {
    return this.current !== null || this.queue.length > 0;
  }

  /** Drops queued digits (an event in progress still ends properly, or the far end hears a stuck key). */
  clear(): void {
    const dropped = this.queue.splice(0);
    for (const pending of dropped) pending.done?.();
  }

  /** Drops everything, the key in progress included: the call is over, nobody will hear its end. */
  abandon(): void {
    const current = this.current;
    this.current = null;
    this.clear();
    current?.done?.();
  }

  /**
   * The event packet for this tick, or null when the tick carries audio. `tickTimestamp` is the
   * RTP timestamp this tick's audio packet would have.
   */
  next(tickTimestamp: number): DtmfPacket | null {
    if (!this.current) {
      const head = this.queue[0];
      if (!head) return null;
      if (head.gapTicks > 0) {
        head.gapTicks--;
        return null;
      }
      this.queue.shift();
      this.current = { event: head.event, timestamp: tickTimestamp >>> 0, sent: 0, done: head.done };
    }
    const current = this.current;
    current.sent++;
    const end = current.sent >= this.toneTicks;
    const duration = Math.min(current.sent, this.toneTicks) * this.samplesPerTick;
    const packet: DtmfPacket = {
      payload: encodeTelephoneEvent({ event: current.event, end, volume: this.volume, duration }),
      timestamp: current.timestamp,
      marker: current.sent === 1,
    };
    if (current.sent >= this.toneTicks + END_PACKETS - 1) {
      this.current = null;
      current.done?.();
    }
    return packet;
  }
}

/**
 * One digit per event from received telephone-event packets. Packets of one event share a
 * timestamp, so the redundant updates and end packets are recognised by it, and two presses of
 * the same key are told apart by theirs.
 */
export class DtmfReceiver {
  private last: { timestamp: number; event: number; duration: number; ended: boolean } | null = null;

  /** Returns the digit when this packet starts a new key press, null otherwise. */
  receive(packet: { timestamp: number; marker: boolean; payload: Uint8Array }): string | null {
    const event = decodeTelephoneEvent(packet.payload);
    if (!event) return null;
    const last = this.last;
    if (last) {
      const delta = timestampDelta(packet.timestamp, last.timestamp);
      if (delta === 0) {
        last.ended ||= event.end;
        last.duration = Math.max(last.duration, event.duration);
        return null;
      }
      // A reordered packet of an earlier event.
      if (delta < 0) return null;
      // A key held past the 16-bit duration continues as a new segment without the marker
      // (RFC 4733 §2.5.1.3): the same press, not a new digit.
      const continues =
        !last.ended && !packet.marker && event.event === last.event && delta <= last.duration + 1000;
      this.last = {
        timestamp: packet.timestamp,
        event: event.event,
        duration: event.duration,
        ended: event.end,
      };
      if (continues) return null;
    } else {
      this.last = {
        timestamp: packet.timestamp,
        event: event.event,
        duration: event.duration,
        ended: event.end,
      };
    }
    return digitOfEvent(event.event);
  }
}
