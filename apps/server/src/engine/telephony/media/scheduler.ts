import { systemClock } from '../../clock';

/** The time the scheduler reads: monotonic milliseconds, and a way to wait. */
export interface TickTimeSource {
  now(): number;
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

/** performance.now() does not jump with the wall clock (NTP steps, manual changes). */
export const monotonicTime: TickTimeSource = {
  now: () => performance.now(),
  sleep: systemClock.sleep,
};

export interface SchedulerStats {
  ticks: number;
  /** Ticks that ran at least `lateThresholdMs` after their deadline. */
  lateTicks: number;
  latenessMeanMs: number;
  latenessP99Ms: number;
  latenessMaxMs: number;
}

export interface DeadlineSchedulerOptions {
  periodMs?: number;
  time?: TickTimeSource;
  /** Default: one period, i.e. the tick ran when its successor was already due. */
  lateThresholdMs?: number;
  /** A tick that throws is reported here; the scheduler keeps going. */
  onError?: (err: unknown) => void;
}

const BUCKET_MS = 0.1;
const BUCKETS = 2000;

/**
 * Runs `onTick(n, lateness)` at start + n × period. Deadlines come from the start time, not from the
 * previous wake-up, so timer overshoot never accumulates; a thread that woke late runs every
 * missed tick at once, so no tick is skipped and RTP timestamps advance without a gap.
 * (setInterval drifts and silently coalesces missed runs.)
 */
export class DeadlineScheduler {
  private readonly periodMs: number;
  private readonly time: TickTimeSource;
  private readonly lateThresholdMs: number;
  private readonly onError: (err: unknown) => void;
  private abort: AbortController | null = null;
  private ticks = 0;
  private lateTicks = 0;
  private latenessSum = 0;
  private latenessMax = 0;
  private windowMax = 0;
  /** Lateness histogram in 0.1 ms steps; the last bucket holds everything beyond 200 ms. */
  private readonly histogram = new Uint32Array(BUCKETS + 1);

  constructor(
    private readonly onTick: (tick: number, latenessMs: number) => void,
    options: DeadlineSchedulerOptions = {},
  ) {
    this.periodMs = options.periodMs ?? 20;
    this.time = options.time ?? monotonicTime;
    this.lateThresholdMs = options.lateThresholdMs ?? this.periodMs;
    this.onError = options.onError ?? (() => {});
  }

  get running(): boolean {
    return this.abort !== null;
  }

  start(): void {
    if (this.abort) return;
    this.abort = new AbortController();
    void this.loop(this.abort.signal);
  }

  stop(): void {
    this.abort?.abort();
    this.abort = null;
  }

  get stats(): SchedulerStats {
    return {
      ticks: this.ticks,
      lateTicks: this.lateTicks,
      latenessMeanMs: this.ticks ? this.latenessSum / this.ticks : 0,
      latenessP99Ms: this.percentile(0.99),
      latenessMaxMs: this.latenessMax,
    };
  }

  /** The worst lateness since the previous call: a bench reports it per interval. */
  takeWindowMaxMs(): number {
    const max = this.windowMax;
    this.windowMax = 0;
    return max;
  }

  private async loop(signal: AbortSignal) {
    const startAt = this.time.now();
    let tick = 0;
    while (!signal.aborted) {
      for (;;) {
        const deadline = startAt + tick * this.periodMs;
        const now = this.time.now();
        if (signal.aborted || deadline > now) break;
        this.record(now - deadline);
        try {
          this.onTick(tick, now - deadline);
        } catch (err) {
          this.onError(err);
        }
        tick++;
      }
      if (signal.aborted) return;
      try {
        await this.time.sleep(startAt + tick * this.periodMs - this.time.now(), signal);
      } catch {
        return;
      }
    }
  }

  private record(lateness: number) {
    this.ticks++;
    this.latenessSum += lateness;
    if (lateness > this.latenessMax) this.latenessMax = lateness;
    if (lateness > this.windowMax) this.windowMax = lateness;
    if (lateness >= this.lateThresholdMs) this.lateTicks++;
    this.histogram[Math.min(BUCKETS, Math.floor(lateness / BUCKET_MS))]!++;
  }

  private percentile(p: number): number {
    if (this.ticks === 0) return 0;
    const rank = Math.ceil(this.ticks * p);
    let seen = 0;
    for (let bucket = 0; bucket <= BUCKETS; bucket++) {
      seen += this.histogram[bucket] as number;
      if (seen >= rank) return Math.min(this.latenessMax, (bucket + 1) * BUCKET_MS);
    }
    return this.latenessMax;
  }
}
