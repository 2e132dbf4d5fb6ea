import { seqDelta, timestampDelta } from './rtp';

export interface JitterBufferOptions {
  /** Packets held before playout starts (and restarts after running dry): the added latency. */
  depth?: number;
  /** Packets held at most; beyond it the oldest are dropped so latency stays bounded. */
  maxDepth?: number;
}

export interface JitterBufferStats {
  /** Packets accepted into the buffer. */
  received: number;
  /** Audio frames handed to playout. */
  played: number;
  /** Sequence numbers whose turn came while they were missing (concealed with silence). */
  lost: number;
  /** Packets that arrived after their turn had passed. */
  late: number;
  duplicates: number;
  /** Packets dropped because the buffer was over `maxDepth`. */
  overflowed: number;
  /** Times the sequence jumped so far that the buffer started over. */
  resets: number;
}

/** What pop() returns for a packet whose turn came while it was missing: conceal it. */
export const LOST: unique symbol = Symbol('lost');

const RING = 64;
/**
 * A forward jump this large (2 s of 20 ms packets) is taken for a new stream under the same
 * SSRC (a PBX switching what it bridges, a capture replayed) rather than hundreds of losses.
 */
const RESYNC_DISTANCE = 100;

/**
 * A small reorder buffer ordered by RTP sequence number (with 16-bit wrap), drained as playout
 * needs audio (one 20 ms packet per tick, or two 30 ms packets per three ticks). Entries whose item is null take a sequence number but carry no audio
 * (telephone events, comfort noise): they keep the loss count honest and cost no tick.
 */
export class JitterBuffer<T> {
  private readonly depth: number;
  private readonly maxDepth: number;
  private readonly slots: Array<{ seq: number; item: T | null } | undefined> = new Array(RING);
  private readonly playedSeq = new Int32Array(RING).fill(-1);
  private count = 0;
  private nextSeq = -1;
  private prefilling = true;
  private readonly counters: JitterBufferStats = {
    received: 0,
    played: 0,
    lost: 0,
    late: 0,
    duplicates: 0,
    overflowed: 0,
    resets: 0,
  };

  constructor(options: JitterBufferOptions = {}) {
    this.depth = Math.max(1, options.depth ?? 3);
    this.maxDepth = Math.min(RING / 2, Math.max(this.depth + 1, options.maxDepth ?? 5));
  }

  get stats(): JitterBufferStats {
    return { ...this.counters };
  }

  /** Packets held now. */
  get size(): number {
    return this.count;
  }

  push(seq: number, item: T | null): void {
    if (this.nextSeq < 0) this.nextSeq = seq;
    let distance = seqDelta(seq, this.nextSeq);
    if (distance < 0) {
      if (-distance <= RING && this.playedSeq[seq % RING] === seq) this.counters.duplicates++;
      else this.counters.late++;
      return;
    }
    if (distance >= RESYNC_DISTANCE) {
      this.reset(seq);
      this.counters.resets++;
      distance = 0;
    }
    const slot = this.slots[seq % RING];
    if (slot && slot.seq === seq) {
      this.counters.duplicates++;
      return;
    }
    // Over capacity: give up on the oldest slots (played as lost if they never came).
    while (distance >= this.maxDepth) {
      const oldest = this.take(this.nextSeq);
      if (oldest) this.counters.overflowed++;
      else this.counters.lost++;
      this.nextSeq = (this.nextSeq + 1) & 0xffff;
      distance--;
    }
    this.slots[seq % RING] = { seq, item };
    this.count++;
    this.counters.received++;
    if (this.prefilling && this.count >= this.depth) this.prefilling = false;
  }

  /**
   * The next packet's audio in sequence; LOST when its turn came and it is missing (later ones
   * are here), null when nothing is due (the cushion is building up or the far end paused).
   */
  pop(): T | typeof LOST | null {
    if (this.nextSeq < 0 || this.prefilling) return null;
    for (;;) {
      const entry = this.take(this.nextSeq);
      if (entry) {
        this.nextSeq = (this.nextSeq + 1) & 0xffff;
        if (entry.item === null) continue;
        this.counters.played++;
        return entry.item;
      }
      if (this.count > 0) {
        this.counters.lost++;
        this.nextSeq = (this.nextSeq + 1) & 0xffff;
        return LOST;
      }
      // Ran dry (the far end paused, or a burst is late): build the cushion up again.
      this.prefilling = true;
      return null;
    }
  }

  /** Forgets everything held: the far end's stream changed (new SSRC, re-INVITE). */
  reset(nextSeq = -1): void {
    this.slots.fill(undefined);
    this.playedSeq.fill(-1);
    this.count = 0;
    this.nextSeq = nextSeq;
    this.prefilling = true;
  }

  private take(seq: number): { seq: number; item: T | null } | undefined {
    const index = seq % RING;
    const entry = this.slots[index];
    if (!entry || entry.seq !== seq) return undefined;
    this.slots[index] = undefined;
    this.playedSeq[index] = seq;
    this.count--;
    return entry;
  }
}

/**
 * Interarrival jitter (RFC 3550 §6.4.1, computed as in A.8): the smoothed mean deviation of the
 * spacing between packets on arrival from their spacing in RTP time.
 */
export class InterarrivalJitter {
  private jitter = 0;
  private last: { timestamp: number; arrival: number } | null = null;

  constructor(private readonly clockRate = 8000) {}

  /** `arrivalMs` on any monotonic millisecond clock. */
  update(rtpTimestamp: number, arrivalMs: number): void {
    const arrival = (arrivalMs * this.clockRate) / 1000;
    if (this.last) {
      const transitDelta = arrival - this.last.arrival - timestampDelta(rtpTimestamp, this.last.timestamp);
      this.jitter += (Math.abs(transitDelta) - this.jitter) / 16;
    }
    this.last = { timestamp: rtpTimestamp, arrival };
  }

  /** In RTP timestamp units, as an RTCP report carries it. */
  get units(): number {
    return this.jitter;
  }

  get ms(): number {
    return (this.jitter * 1000) / this.clockRate;
  }

  reset(): void {
    this.jitter = 0;
    this.last = null;
  }
}
