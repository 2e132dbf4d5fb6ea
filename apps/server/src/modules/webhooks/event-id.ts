import { randomBytes } from 'node:crypto';

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

let lastMs = -1;
/** The 80 random bits of the last id, as 16 base-32 digits (0-31), most significant first. */
let lastRandom: number[] = [];

function freshRandom(): number[] {
  const bytes = randomBytes(16);
  return Array.from(bytes, (b) => b & 31);
}

/** Adds one to the random part; ids of one millisecond stay in order (the ULID monotonic rule). */
function increment(digits: number[]): number[] {
  const next = [...digits];
  for (let i = next.length - 1; i >= 0; i--) {
    if ((next[i] as number) < 31) {
      next[i] = (next[i] as number) + 1;
      return next;
    }
    next[i] = 0;
  }
  // 2^80 ids in one millisecond cannot happen; start over rather than throw.
  return freshRandom();
}

/**
 * `msg_` and a ULID (48 bits of milliseconds, 80 random bits, Crockford base 32): the
 * `webhook-id` of an event. Sortable by time, so the delivery log and a receiver's store order
 * events by id, and monotonic within one process and millisecond.
 */
export function webhookEventId(now = Date.now()): string {
  if (now === lastMs) lastRandom = increment(lastRandom);
  else {
    lastMs = now;
    lastRandom = freshRandom();
  }
  let time = '';
  let rest = Math.max(0, Math.floor(now));
  for (let i = 0; i < 10; i++) {
    time = CROCKFORD[rest % 32] + time;
    rest = Math.floor(rest / 32);
  }
  return `msg_${time}${lastRandom.map((d) => CROCKFORD[d]).join('')}`;
}
