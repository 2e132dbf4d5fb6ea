import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * Test support: a local HTTP server speaking OpenAI's `POST /v1/audio/speech`
 * (https://platform.openai.com/docs/api-reference/audio/createSpeech; the openai-node SDK's
 * `resources/audio/speech.ts`) the way a strict provider does: a JSON body with model, input,
 * voice, response_format and speed; `Authorization: Bearer <key>` checked exactly (401 with
 * OpenAI's error body otherwise); an unknown model answered 404 `model_not_found`; too many
 * requests at once answered 429 `rate_limit_exceeded`. Audio is streamed with chunked transfer
 * as it is "rendered": `pcm` is 24 kHz 16-bit little-endian mono with no header, `wav` a RIFF
 * header whose sizes are left open (0xFFFFFFFF, as streaming servers write it) then the samples.
 *
 * The audio is deterministic: each character of the input is `msPerChar` of a constant level,
 * `levelOf(index)`, so a test can tell whether every character arrived, in order, at the right
 * rate (a constant survives resampling) and at the right volume.
 */

export interface SpeechRequestBody {
  model?: unknown;
  input?: unknown;
  voice?: unknown;
  response_format?: unknown;
  speed?: unknown;
}

export interface SpeechRequestRecord {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: SpeechRequestBody;
  status: number;
  /** Audio frames written so far (after the header, for wav). */
  framesSent: number;
  /** The client went away before the last frame. */
  closedEarly: boolean;
}

/** How one request is answered, beyond the options' defaults. */
export interface SpeechBehaviour {
  /** Before the headers and the first audio: the vendor's time to first byte. */
  firstAudioDelayMs?: number;
  /** Between frames: how fast the vendor renders. */
  frameIntervalMs?: number;
  /** Bytes per frame; odd sizes split samples across frames. */
  frameBytes?: number;
  /** Answer with this format whatever was asked (a server that only speaks wav). */
  forceFormat?: 'pcm' | 'wav';
  /** The sample rate of a wav answer (pcm is always 24 kHz). */
  wavSampleRate?: number;
  /** Channels of a wav answer (interleaved copies of the same samples). */
  wavChannels?: number;
  /** Destroy the connection after this many frames: a failure in the middle of the stream. */
  dropAfterFrames?: number;
  /** Stop sending after this many frames, keeping the connection open. */
  stallAfterFrames?: number;
  /** Never answer at all. */
  hang?: boolean;
  /** Answer with this status and an OpenAI error body instead of audio. */
  status?: number;
  /** Answer 200 with this JSON body (a server that is not a speech endpoint). */
  jsonBody?: unknown;
  /** Answer 200 with these bytes (a server that ignores response_format and sends MP3). */
  raw?: { contentType: string; bytes: Buffer };
}

export interface OpenAISpeechServerOptions {
  /** When set, requests must carry exactly `Authorization: Bearer <apiKey>`. */
  apiKey?: string;
  /** When set, any other model gets 404 as OpenAI answers an unknown model. */
  models?: string[];
  /** More concurrent requests than this get 429 (the vendor's concurrency rule). */
  maxConcurrent?: number;
  /** Duration of each character of the input (default 40 ms). */
  msPerChar?: number;
  /** Defaults for every request; `behave` overrides them per request. */
  behaviour?: SpeechBehaviour;
}

export interface OpenAISpeechServer {
  /** `http://127.0.0.1:<port>/v1`: what a synthesis profile's base URL would be. */
  baseUrl: string;
  requests: SpeechRequestRecord[];
  /** Decides how later requests are answered (index counts every request received). */
  behave(fn: (body: SpeechRequestBody, index: number) => SpeechBehaviour): void;
  /** Resolves once `count` requests have been received in all. */
  received(count: number): Promise<void>;
  close(): Promise<void>;
}

export const FAKE_PCM_RATE = 24_000;

/** The level the fake speaks character `index` at: distinct, loud, never zero. */
export const levelOf = (index: number) => 2000 + (index % 12) * 1000;

/** The whole utterance at `rate`, as the fake renders it. */
export function fakeSpeech(text: string, rate: number, msPerChar: number): Int16Array {
  const chars = [...text];
  const perChar = Math.round((rate * msPerChar) / 1000);
  const out = new Int16Array(chars.length * perChar);
  for (let i = 0; i < chars.length; i++) out.fill(levelOf(i), i * perChar, (i + 1) * perChar);
  return out;
}

/** A 16-bit PCM WAV header; without `dataBytes`, the sizes a stream that has not ended writes. */
export function wavHeader(rate: number, channels: number, dataBytes = 0xffffffff): Buffer {
  const header = Buffer.alloc(44);
  header.write('RIFF', 0, 'ascii');
  header.writeUInt32LE(dataBytes === 0xffffffff ? dataBytes : 36 + dataBytes, 4);
  header.write('WAVE', 8, 'ascii');
  header.write('fmt ', 12, 'ascii');
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20);
  header.writeUInt16LE(channels, 22);
  header.writeUInt32LE(rate, 24);
  header.writeUInt32LE(rate * channels * 2, 28);
  header.writeUInt16LE(channels * 2, 32);
  header.writeUInt16LE(16, 34);
  header.write('data', 36, 'ascii');
  header.writeUInt32LE(dataBytes, 40);
  return header;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export async function startOpenAISpeechServer(
  options: OpenAISpeechServerOptions = {},
): Promise<OpenAISpeechServer> {
  const requests: SpeechRequestRecord[] = [];
  const waiters: { count: number; resolve: () => void }[] = [];
  const open = new Set<http.ServerResponse>();
  let behave: (body: SpeechRequestBody, index: number) => SpeechBehaviour = () => ({});
  let active = 0;
  const msPerChar = options.msPerChar ?? 40;

  const sendError = (
    res: http.ServerResponse,
    record: SpeechRequestRecord,
    status: number,
    message: string,
    code: string | null,
    type = 'invalid_request_error',
  ) => {
    record.status = status;
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: { message, type, param: null, code } }));
  };

  const handle = async (req: http.IncomingMessage, res: http.ServerResponse) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    let body: SpeechRequestBody = {};
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as SpeechRequestBody;
    } catch {
      body = {};
    }
    const record: SpeechRequestRecord = {
      path,
      headers: req.headers,
      body,
      status: 200,
      framesSent: 0,
      closedEarly: false,
    };
    const index = requests.push(record) - 1;
    for (const waiter of waiters.splice(0)) {
      if (requests.length >= waiter.count) waiter.resolve();
      else waiters.push(waiter);
    }

    if (req.method !== 'POST' || path !== '/v1/audio/speech') {
      return sendError(res, record, 404, `Invalid URL (${req.method} ${path})`, null);
    }
    if (options.apiKey !== undefined && req.headers.authorization !== `Bearer ${options.apiKey}`) {
      // OpenAI echoes a masked key; the client must still never show it.
      const sent = (req.headers.authorization ?? '').replace(/^Bearer /, '');
      return sendError(
        res,
        record,
        401,
        `Incorrect API key provided: ${sent.slice(0, 3)}****${sent.slice(-4)}.`,
        'invalid_api_key',
      );
    }
    const { model, input, voice } = body;
    if (typeof model !== 'string' || !model) {
      return sendError(
        res,
        record,
        400,
        "Missing required parameter: 'model'.",
        'missing_required_parameter',
      );
    }
    if (options.models && !options.models.includes(model)) {
      return sendError(
        res,
        record,
        404,
        `The model \`${model}\` does not exist or you do not have access to it.`,
        'model_not_found',
      );
    }
    if (typeof input !== 'string' || !input) {
      return sendError(
        res,
        record,
        400,
        "Missing required parameter: 'input'.",
        'missing_required_parameter',
      );
    }
    if (typeof voice !== 'string' || !voice) {
      return sendError(
        res,
        record,
        400,
        "Missing required parameter: 'voice'.",
        'missing_required_parameter',
      );
    }
    const format = body.response_format ?? 'mp3';
    if (format !== 'pcm' && format !== 'wav') {
      // This fake renders only the uncompressed formats the client may ask for.
      return sendError(res, record, 400, `Unsupported response_format '${String(format)}'.`, null);
    }
    const speed = body.speed ?? 1;
    if (typeof speed !== 'number' || speed < 0.25 || speed > 4) {
      return sendError(res, record, 400, 'Invalid speed: must be between 0.25 and 4.0.', null);
    }
    if (options.maxConcurrent !== undefined && active >= options.maxConcurrent) {
      return sendError(
        res,
        record,
        429,
        'Rate limit reached for requests. Limit: concurrent requests.',
        'rate_limit_exceeded',
        'requests',
      );
    }

    const behaviour = { ...options.behaviour, ...behave(body, index) };
    if (behaviour.hang) return;
    active++;
    try {
      if (behaviour.firstAudioDelayMs) await sleep(behaviour.firstAudioDelayMs);
      if (behaviour.status) {
        return sendError(
          res,
          record,
          behaviour.status,
          `upstream error ${behaviour.status}`,
          null,
          'server_error',
        );
      }
      if (behaviour.jsonBody !== undefined) {
        res.writeHead(200, { 'content-type': 'application/json' });
        return res.end(JSON.stringify(behaviour.jsonBody));
      }
      if (behaviour.raw) {
        res.writeHead(200, { 'content-type': behaviour.raw.contentType });
        return res.end(behaviour.raw.bytes);
      }
      const answer = behaviour.forceFormat ?? format;
      const rate = answer === 'wav' ? (behaviour.wavSampleRate ?? FAKE_PCM_RATE) : FAKE_PCM_RATE;
      const channels = answer === 'wav' ? (behaviour.wavChannels ?? 1) : 1;
      const mono = fakeSpeech(input, rate, msPerChar);
      const samples = new Int16Array(mono.length * channels);
      for (let i = 0; i < mono.length; i++) samples.fill(mono[i] ?? 0, i * channels, (i + 1) * channels);
      const pcm = Buffer.from(samples.buffer, samples.byteOffset, samples.byteLength);

      res.writeHead(200, {
        'content-type': answer === 'wav' ? 'audio/wav' : 'audio/pcm',
        'transfer-encoding': 'chunked',
      });
      if (answer === 'wav') res.write(wavHeader(rate, channels));
      const frameBytes = behaviour.frameBytes ?? 1920;
      for (let at = 0; at < pcm.length; at += frameBytes) {
        if (res.destroyed) {
          record.closedEarly = true;
          return;
        }
        if (behaviour.dropAfterFrames !== undefined && record.framesSent >= behaviour.dropAfterFrames) {
          res.socket?.destroy();
          return;
        }
        if (behaviour.stallAfterFrames !== undefined && record.framesSent >= behaviour.stallAfterFrames)
          return;
        res.write(pcm.subarray(at, at + frameBytes));
        record.framesSent++;
        if (behaviour.frameIntervalMs) await sleep(behaviour.frameIntervalMs);
      }
      res.end();
    } finally {
      active--;
    }
  };

  const server = http.createServer((req, res) => {
    open.add(res);
    res.on('close', () => {
      open.delete(res);
      const record = requests.find((r) => r.headers === req.headers);
      if (record && !res.writableFinished) record.closedEarly = true;
    });
    handle(req, res).catch(() => {
      if (!res.headersSent) res.writeHead(500).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    behave(fn) {
      behave = fn;
    },
    received(count) {
      if (requests.length >= count) return Promise.resolve();
      return new Promise<void>((resolve) => waiters.push({ count, resolve }));
    },
    close() {
      for (const res of open) res.destroy();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
