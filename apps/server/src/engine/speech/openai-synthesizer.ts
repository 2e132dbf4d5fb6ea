import { createOpenAIClient, ProviderError, providerTimeout, toProviderError } from '../brain/openai-client';
import { type Clock, systemClock } from '../clock';
import { Resampler } from './resample';
import { type StreamingSynthesizer, SYNTHESIS_SERVICE } from './synthesis';

/**
 * Speech synthesis through an OpenAI-compatible `POST {baseUrl}/audio/speech` (OpenAI itself, and
 * the self-hosted servers that speak it for CosyVoice, Kokoro, openedai-speech...). Followed:
 * OpenAI's API reference "Create speech" (platform.openai.com/docs/api-reference/audio/createSpeech)
 * and the openai-node SDK v6 `resources/audio/speech.ts`: body {model, input, voice,
 * response_format, speed 0.25-4}; `pcm` is "similar to WAV but without a header", 24 kHz, mono,
 * 16-bit signed little-endian. The body is streamed as the server renders it, so the first
 * sentence's audio plays while the rest is still being generated.
 *
 * Servers that ignore `pcm` and answer a WAV are read too: the RIFF header is parsed as it
 * arrives (its sizes may be left open, as streaming writers do) and the samples stream after it.
 */

/** OpenAI's `pcm` rate; the API documents no other. */
export const OPENAI_PCM_RATE = 24_000;

/**
 * How long the call waits for audio: before the first chunk, and between chunks once it flows.
 * A sentence longer than this still streams to the end as long as audio keeps coming.
 */
export const SYNTHESIS_TIMEOUT_MS = 10_000;

/** Our volume scale's normal level: 80 plays the vendor's audio as it comes. */
const UNITY_VOLUME = 80;

export interface OpenAISynthesizerOptions {
  baseUrl: string;
  /** Empty for a local server that needs none. */
  apiKey: string;
  model: string;
  timeoutMs?: number;
  /** The timeouts run on this clock, so tests decide when they fire. */
  clock?: Clock;
}

const fail = (kind: ConstructorParameters<typeof ProviderError>[0], message: string) =>
  new ProviderError(kind, message, undefined, SYNTHESIS_SERVICE.id);

/** A WAV's format chunk, as far as this reader needs it. */
interface WavFormat {
  sampleRate: number;
  channels: number;
}

const readAscii = (bytes: Uint8Array, at: number) => String.fromCharCode(...bytes.subarray(at, at + 4));
const readU16 = (bytes: Uint8Array, at: number) => (bytes[at] ?? 0) | ((bytes[at + 1] ?? 0) << 8);
const readU32 = (bytes: Uint8Array, at: number) =>
  (readU16(bytes, at) + readU16(bytes, at + 2) * 65536) >>> 0;

/**
 * Turns the response body, chunk by chunk, into mono 16-bit samples at the vendor's rate: first
 * telling raw PCM from a WAV (and from formats it cannot play), then carrying bytes that split a
 * sample or a frame over to the next chunk.
 */
class SpeechBodyDecoder {
  private pending: Uint8Array = new Uint8Array(0);
  private state: 'sniff' | 'header' | 'samples' = 'sniff';
  private format: WavFormat | undefined;
  /** Bytes of a non-audio chunk (LIST, fact) still to skip before the next chunk header. */
  private skip = 0;
  /** Bytes of samples a WAV declared; Infinity when left open. */
  private dataLeft = Number.POSITIVE_INFINITY;
  rate = OPENAI_PCM_RATE;
  channels = 1;

  /** Samples ready so far; an empty array while the header is still arriving. */
  push(chunk: Uint8Array): Int16Array {
    this.pending = this.pending.length ? concat(this.pending, chunk) : chunk;
    if (this.state === 'sniff') this.sniff(false);
    if (this.state === 'header') this.readHeader();
    return this.state === 'samples' ? this.takeSamples() : new Int16Array(0);
  }

  /** The body ended: what is left must have been complete. */
  end(): void {
    if (this.state === 'sniff') this.sniff(true);
    if (this.state === 'header' && this.pending.length > 0) {
      throw fail('bad_request', `${SYNTHESIS_SERVICE.name}返回的 WAV 音频不完整（缺少数据段）`);
    }
  }

  private sniff(ended: boolean) {
    if (this.pending.length < 12 && !ended) return;
    const head = this.pending;
    if (head.length >= 12 && readAscii(head, 0) === 'RIFF' && readAscii(head, 8) === 'WAVE') {
      this.pending = head.subarray(12);
      this.state = 'header';
      return;
    }
    // Compressed audio the phone line cannot carry: an ID3 tag or an MPEG frame sync, Ogg, fLaC.
    const mp3 =
      (head[0] === 0x49 && head[1] === 0x44 && head[2] === 0x33) ||
      (head[0] === 0xff && ((head[1] ?? 0) & 0xe0) === 0xe0);
    const compressed = mp3
      ? 'MP3'
      : readAscii(head, 0) === 'OggS'
        ? 'Ogg/Opus'
        : readAscii(head, 0) === 'fLaC'
          ? 'FLAC'
          : '';
    if (compressed) {
      throw fail(
        'bad_request',
        `${SYNTHESIS_SERVICE.name}返回了 ${compressed} 音频，请确认该服务支持 pcm 或 wav 格式（response_format）`,
      );
    }
    this.state = 'samples';
  }

  private readHeader() {
    for (;;) {
      if (this.skip > 0) {
        const dropped = Math.min(this.skip, this.pending.length);
        this.pending = this.pending.subarray(dropped);
        this.skip -= dropped;
        if (this.skip > 0) return;
      }
      if (this.pending.length < 8) return;
      const id = readAscii(this.pending, 0);
      const size = readU32(this.pending, 4);
      if (id === 'data') {
        if (!this.format)
          throw fail('bad_request', `${SYNTHESIS_SERVICE.name}返回的 WAV 音频格式不正确（缺少格式段）`);
        this.pending = this.pending.subarray(8);
        // Streaming writers leave the size at 0 or 0xFFFFFFFF: then the samples run to the end.
        this.dataLeft = size === 0 || size === 0xffffffff ? Number.POSITIVE_INFINITY : size;
        this.rate = this.format.sampleRate;
        this.channels = this.format.channels;
        this.state = 'samples';
        return;
      }
      if (id === 'fmt ') {
        if (this.pending.length < 8 + size) return;
        const body = this.pending.subarray(8, 8 + size);
        const tag = readU16(body, 0);
        const channels = readU16(body, 2);
        const sampleRate = readU32(body, 4);
        const bits = readU16(body, 14);
        // 1 = PCM; 0xFFFE = WAVE_FORMAT_EXTENSIBLE, which carries PCM for 16-bit output.
        if ((tag !== 1 && tag !== 0xfffe) || bits !== 16 || channels < 1 || sampleRate < 1000) {
          throw fail(
            'bad_request',
            `${SYNTHESIS_SERVICE.name}返回的 WAV 音频不是 16 位 PCM（${bits} 位），请确认该服务支持 pcm 或 wav 格式`,
          );
        }
        this.format = { sampleRate, channels };
        this.pending = this.pending.subarray(8 + size + (size % 2));
        continue;
      }
      this.pending = this.pending.subarray(8);
      this.skip = size + (size % 2);
    }
  }

  private takeSamples(): Int16Array {
    const frameBytes = 2 * this.channels;
    let usable = Math.min(this.pending.length, this.dataLeft);
    usable -= usable % frameBytes;
    const frames = usable / frameBytes;
    const out = new Int16Array(frames);
    const bytes = this.pending;
    for (let frame = 0; frame < frames; frame++) {
      let sum = 0;
      for (let ch = 0; ch < this.channels; ch++) {
        const at = frame * frameBytes + ch * 2;
        sum += (((bytes[at] ?? 0) | ((bytes[at + 1] ?? 0) << 8)) << 16) >> 16;
      }
      out[frame] = Math.round(sum / this.channels);
    }
    this.dataLeft -= usable;
    // Beyond a declared data chunk come trailing chunks, not samples.
    this.pending = this.dataLeft <= 0 ? new Uint8Array(0) : bytes.slice(usable);
    return out;
  }
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}

/** Our 0-100 volume as a gain: OpenAI's API has no volume, so it is applied to the samples. */
function applyGain(samples: Int16Array, volume: number): Int16Array {
  if (volume === UNITY_VOLUME) return samples;
  const gain = Math.max(0, volume) / UNITY_VOLUME;
  for (let i = 0; i < samples.length; i++) {
    const value = Math.round((samples[i] ?? 0) * gain);
    samples[i] = value > 32767 ? 32767 : value < -32768 ? -32768 : value;
  }
  return samples;
}

/**
 * A timer re-armed by every chunk: it fires when the vendor has been silent for `ms` on the
 * clock, whether before the first audio or in the middle of a sentence.
 */
function silenceWatchdog(clock: Clock, ms: number, onSilence: () => void) {
  let stop: AbortController | undefined;
  let fired = false;
  return {
    arm() {
      stop?.abort();
      const current = new AbortController();
      stop = current;
      clock.sleep(ms, current.signal).then(
        () => {
          fired = true;
          onSilence();
        },
        () => {},
      );
    },
    fired: () => fired,
    dispose: () => stop?.abort(),
  };
}

export function createOpenAISynthesizer(options: OpenAISynthesizerOptions): StreamingSynthesizer {
  const timeoutMs = options.timeoutMs ?? SYNTHESIS_TIMEOUT_MS;
  const clock = options.clock ?? systemClock;
  // The client's own timer is only a backstop for a clock that never fires; the clock decides.
  const client = createOpenAIClient(
    { baseUrl: options.baseUrl, apiKey: options.apiKey },
    { timeoutMs: timeoutMs + 5_000 },
  );

  return {
    async *stream(text, voice, { sampleRate, signal }) {
      const input = text.trim();
      if (!input || signal?.aborted) return;
      const request = new AbortController();
      const onAbort = () => request.abort(signal?.reason);
      signal?.addEventListener('abort', onAbort, { once: true });
      const watchdog = silenceWatchdog(clock, timeoutMs, () => request.abort());
      let reader: ReadableStreamDefaultReader<Uint8Array> | undefined;
      let finished = false;
      try {
        watchdog.arm();
        const response = await client.audio.speech.create(
          {
            model: options.model,
            input,
            voice: voice.voiceId,
            response_format: 'pcm',
            speed: voice.speed,
          },
          // A retry would double what the caller waits in silence; the call falls back instead.
          { signal: request.signal, maxRetries: 0 },
        );
        assertAudioResponse(response);
        if (!response.body) throw fail('bad_request', `${SYNTHESIS_SERVICE.name}没有返回音频`);
        reader = response.body.getReader();
        const decoder = new SpeechBodyDecoder();
        let resampler: Resampler | null | undefined;
        const convert = (samples: Int16Array): Int16Array => {
          resampler ??= decoder.rate === sampleRate ? null : new Resampler(decoder.rate, sampleRate);
          return applyGain(resampler ? resampler.push(samples) : samples, voice.volume);
        };
        let heard = 0;
        for (;;) {
          const read = await reader.read();
          if (read.done) break;
          watchdog.arm();
          const samples = decoder.push(read.value);
          if (samples.length === 0) continue;
          heard += samples.length;
          const out = convert(samples);
          if (out.length > 0) yield out;
        }
        finished = true;
        decoder.end();
        if (heard === 0) {
          throw fail(
            'bad_request',
            `${SYNTHESIS_SERVICE.name}没有返回音频，请检查${SYNTHESIS_SERVICE.profile}中的模型与音色`,
          );
        }
        const tail = resampler ? applyGain(resampler.flush(), voice.volume) : new Int16Array(0);
        if (tail.length > 0) yield tail;
      } catch (err) {
        if (watchdog.fired()) throw providerTimeout(timeoutMs, SYNTHESIS_SERVICE);
        // Barge-in or hang-up: the caller asked us to stop, which is not a failure.
        if (signal?.aborted) return;
        throw mapFailure(err, options.apiKey, timeoutMs, reader !== undefined);
      } finally {
        watchdog.dispose();
        signal?.removeEventListener('abort', onAbort);
        // Stopped early (abort, a consumer that broke off, a failure): close the connection.
        if (!finished) {
          request.abort();
          reader?.cancel().catch(() => {});
        }
      }
    },
  };
}

/** A 200 that carries JSON or a web page is a wrong address, not audio. */
function assertAudioResponse(response: Response) {
  const type = (response.headers.get('content-type') ?? '').toLowerCase();
  if (type.includes('json') || type.startsWith('text/')) {
    throw fail(
      'bad_request',
      `${SYNTHESIS_SERVICE.name}的应答不是音频，请确认接口地址指向 OpenAI 兼容的 /audio/speech 接口`,
    );
  }
}

function mapFailure(err: unknown, apiKey: string, timeoutMs: number, streaming: boolean): unknown {
  const mapped = toProviderError(err, apiKey, timeoutMs, SYNTHESIS_SERVICE);
  if (mapped instanceof ProviderError) return mapped;
  // The body broke off (socket reset, server crash): part of the sentence is lost.
  if (streaming) return fail('network', `${SYNTHESIS_SERVICE.name}在合成途中断开了连接，请稍后再试`);
  return fail('network', `无法连接${SYNTHESIS_SERVICE.name}，请检查接口地址是否正确、服务是否已启动`);
}
