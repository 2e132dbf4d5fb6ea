import type { Clock } from '../../../engine/clock';

/**
 * Keeps a client under a vendor's documented request rate: at most `limit` requests start in any
 * `windowMs`. Each request reserves the moment it may start, `windowMs` after the request `limit`
 * places before it, so a burst is spread rather than refused, and reservations are taken
 * synchronously, in call order, so concurrent callers cannot take the same slot. A token bucket
 * refilling at `limit`/s would let up to twice `limit` through in a window after an idle spell;
 * remembering the last `limit` start times is exact and costs one number per request of the rate.
 */
export class RequestPacer {
  private readonly starts: number[];
  private next = 0;

  constructor(
    readonly limit: number,
    private readonly clock: Clock,
    readonly windowMs = 1000,
  ) {
    if (!Number.isInteger(limit) || limit < 1) throw new RangeError('limit must be a positive integer');
    this.starts = new Array<number>(limit).fill(Number.NEGATIVE_INFINITY);
  }

  /** Resolves when the caller may start its request. */
  async take(signal?: AbortSignal): Promise<void> {
    const now = this.clock.now();
    const at = Math.max(now, (this.starts[this.next] as number) + this.windowMs);
    this.starts[this.next] = at;
    this.next = (this.next + 1) % this.limit;
    if (at > now) await this.clock.sleep(at - now, signal);
  }
}
