import { readMono } from './wav';

/**
 * Sample-rate conversion for telephony audio: the synthesiser's 22.05 kHz (or 16/24/44.1 kHz
 * from providers) down to G.711's 8 kHz, and 8 kHz up to the 16 kHz some recognisers want.
 *
 * A polyphase windowed-sinc FIR (Kaiser window). Naive decimation would fold everything above
 * 4 kHz back into the band a caller hears (a 6 kHz fricative lands at 2 kHz); the low-pass keeps
 * the whole telephone band (up to 85 % of the lower Nyquist, 3.4 kHz at 8 kHz) flat and removes
 * everything from the lower Nyquist up by at least STOPBAND_DB, so nothing aliases at all.
 */

const STOPBAND_DB = 80;
const PASSBAND_FRACTION = 0.85;

const gcd = (a: number, b: number): number => (b === 0 ? a : gcd(b, a % b));

/** Zeroth-order modified Bessel function of the first kind, for the Kaiser window. */
function besselI0(x: number): number {
  let sum = 1;
  let term = 1;
  const half = x / 2;
  for (let k = 1; k < 50; k++) {
    term *= (half / k) * (half / k);
    sum += term;
    if (term < sum * 1e-12) break;
  }
  return sum;
}

interface Filter {
  /** Output samples advance by `down / up` input samples. */
  up: number;
  down: number;
  /** Taps per output sample; output m reads inputs floor(m*down/up) - half + 1 .. + half. */
  half: number;
  /** `up` rows of 2*half coefficients, one row per fractional position. */
  phases: Float32Array[];
}

const filters = new Map<string, Filter>();

/** Designs (once per rate pair) the polyphase low-pass for converting `fromRate` to `toRate`. */
function filterFor(fromRate: number, toRate: number): Filter {
  const key = `${fromRate}:${toRate}`;
  const cached = filters.get(key);
  if (cached) return cached;
  const divisor = gcd(fromRate, toRate);
  const up = toRate / divisor;
  const down = fromRate / divisor;
  const nyquist = Math.min(fromRate, toRate) / 2;
  const passEdge = nyquist * PASSBAND_FRACTION;
  // In cycles per input sample: half-amplitude cutoff midway through the transition band.
  const cutoff = (passEdge + nyquist) / 2 / fromRate;
  const transition = (2 * Math.PI * (nyquist - passEdge)) / fromRate;
  // Kaiser's estimates of the length and shape that reach the stopband attenuation.
  const taps = Math.ceil((STOPBAND_DB - 8) / (2.285 * transition)) + 1;
  const half = Math.ceil(taps / 2);
  const beta = 0.1102 * (STOPBAND_DB - 8.7);
  const i0Beta = besselI0(beta);
  const phases: Float32Array[] = [];
  for (let phase = 0; phase < up; phase++) {
    const row = new Float32Array(2 * half);
    const offset = phase / up;
    let sum = 0;
    for (let j = 0; j < 2 * half; j++) {
      // Distance in input samples between the output instant and input tap j.
      const x = offset + half - 1 - j;
      const ratio = x / half;
      const window = Math.abs(ratio) >= 1 ? 0 : besselI0(beta * Math.sqrt(1 - ratio * ratio)) / i0Beta;
      const arg = 2 * cutoff * x;
      const sinc = arg === 0 ? 1 : Math.sin(Math.PI * arg) / (Math.PI * arg);
      row[j] = 2 * cutoff * sinc * window;
      sum += row[j]!;
    }
    // Unity gain at DC for every phase, so a constant input stays constant with no phase ripple.
    for (let j = 0; j < row.length; j++) row[j]! /= sum;
    phases.push(row);
  }
  const filter = { up, down, half, phases };
  filters.set(key, filter);
  return filter;
}

/** How many output samples `inputLength` input samples make: every output instant inside the input. */
export function resampledLength(inputLength: number, fromRate: number, toRate: number): number {
  const divisor = gcd(fromRate, toRate);
  return Math.ceil((inputLength * (toRate / divisor)) / (fromRate / divisor));
}

const toInt16 = (value: number) => {
  const rounded = Math.round(value);
  return rounded > 32767 ? 32767 : rounded < -32768 ? -32768 : rounded;
};

function assertRate(name: string, rate: number) {
  if (!Number.isInteger(rate) || rate <= 0) throw new RangeError(`${name} must be a positive integer`);
}

/**
 * Streaming converter: feed chunks of any size, then `flush` once at the end. The output equals
 * the one-shot `resample` of the concatenated input, sample for sample. Outputs lag the input by
 * the filter's half length (about 4 ms down to 8 kHz), released as soon as their taps have arrived.
 */
export class Resampler {
  private readonly filter: Filter;
  /** Unconsumed input, starting at absolute input index `bufferStart`; grows only when a chunk is larger than before. */
  private buffer: Float32Array;
  private bufferStart: number;
  private buffered = 0;
  private received = 0;
  /** Index of the next output sample. */
  private produced = 0;
  private flushed = false;

  constructor(
    readonly fromRate: number,
    readonly toRate: number,
  ) {
    assertRate('fromRate', fromRate);
    assertRate('toRate', toRate);
    this.filter = filterFor(fromRate, toRate);
    // The first outputs read taps before the start: they are zeros.
    this.bufferStart = -(this.filter.half - 1);
    this.buffered = this.filter.half - 1;
    this.buffer = new Float32Array(this.buffered + 4096);
  }

  push(chunk: Int16Array): Int16Array {
    if (this.flushed) throw new Error('resampler already flushed');
    this.append(chunk, chunk.length);
    this.received += chunk.length;
    return this.drain(this.received);
  }

  /** Releases the remaining outputs, reading zeros past the end of the input. */
  flush(): Int16Array {
    if (this.flushed) return new Int16Array(0);
    this.flushed = true;
    this.append(null, this.filter.half);
    return this.drain(this.received);
  }

  private append(chunk: Int16Array | null, count: number) {
    const needed = this.buffered + count;
    if (needed > this.buffer.length) {
      const grown = new Float32Array(Math.max(needed, this.buffer.length * 2));
      grown.set(this.buffer.subarray(0, this.buffered));
      this.buffer = grown;
    }
    if (chunk) for (let i = 0; i < count; i++) this.buffer[this.buffered + i] = chunk[i]!;
    else this.buffer.fill(0, this.buffered, this.buffered + count);
    this.buffered += count;
  }

  /** Computes every output whose taps are buffered, up to the count the input length allows. */
  private drain(inputLength: number): Int16Array {
    const { up, down, half, phases } = this.filter;
    const total = resampledLength(inputLength, this.fromRate, this.toRate);
    const available = this.bufferStart + this.buffered;
    let last = this.produced;
    // Output m reads up to input floor(m*down/up) + half.
    while (last < total && Math.floor((last * down) / up) + half < available) last++;
    const out = new Int16Array(last - this.produced);
    const buffer = this.buffer;
    for (let m = this.produced; m < last; m++) {
      const position = m * down;
      const base = Math.floor(position / up);
      const row = phases[position - base * up]!;
      const first = base - half + 1 - this.bufferStart;
      let acc = 0;
      for (let j = 0; j < row.length; j++) acc += row[j]! * buffer[first + j]!;
      out[m - this.produced] = toInt16(acc);
    }
    this.produced = last;
    // Keep only what later outputs still read: from the first tap of the next output on.
    const keepFrom = Math.floor((last * down) / up) - half + 1 - this.bufferStart;
    if (keepFrom > 0) {
      const drop = Math.min(keepFrom, this.buffered);
      this.buffer.copyWithin(0, drop, this.buffered);
      this.buffered -= drop;
      this.bufferStart += drop;
    }
    return out;
  }
}

/** One-shot conversion of 16-bit PCM; the result has `resampledLength(...)` samples. */
export function resample(samples: Int16Array, fromRate: number, toRate: number): Int16Array {
  if (fromRate === toRate) return samples.slice();
  const resampler = new Resampler(fromRate, toRate);
  const head = resampler.push(samples);
  const tail = resampler.flush();
  const out = new Int16Array(head.length + tail.length);
  out.set(head);
  out.set(tail, head.length);
  return out;
}

/**
 * The 16-bit PCM of a WAV (the synthesiser's output) at `toRate`, mono: channels are averaged.
 * This is what a SIP leg plays after G.711 encoding.
 */
export function wavToPcm(wav: Buffer, toRate = 8000): Int16Array {
  const { samples, sampleRate } = readMono(wav);
  // readMono's array is already a copy of its own.
  return sampleRate === toRate ? samples : resample(samples, sampleRate, toRate);
}
