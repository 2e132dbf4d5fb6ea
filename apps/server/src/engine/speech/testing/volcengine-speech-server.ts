import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { readWav } from '../wav';

/**
 * Test support: a local server speaking the two Volcengine (火山引擎豆包语音) APIs a cloned voice
 * needs, the way the real ones behave:
 * - 声音复刻 `POST /api/v1/mega_tts/audio/upload` and `/api/v1/mega_tts/status`: the gateway
 *   checks `Authorization: Bearer;<token>` (a semicolon) and `Resource-Id: volc.megatts.voiceclone`
 *   and answers 401 "load grant: requested grant not found" / 403 otherwise; the service answers
 *   `{BaseResp: {StatusCode, StatusMessage}, ...}`, accepts only slots bought for the APP ID
 *   (1107 otherwise), a limited number of uploads per slot (1123), a decodable sample (1105),
 *   `source: 2`, and trains until the test finishes it (status 1 → 2 or 3).
 * - 语音合成 `POST /api/v1/tts` (HTTP 非流式): the same gateway check, then {reqid, code, message,
 *   sequence, data (base64 PCM), addition}; code 3000 on success, 3001 for bad parameters, 3003
 *   past the concurrency limit, 3006 for a reused reqid, 3010 for text over 1024 bytes, 3011 for
 *   empty text, 3050 for an unknown voice (a cloned speaker is known on cluster volcano_icl once
 *   trained). Audio is a tone per character, `msPerChar` each, at the requested rate.
 * Every answer can wait `delayMs`; `fault` fails the next request, or cuts it mid-body.
 */

export interface VolcengineFault {
  /** Only requests to this path (default: any). */
  path?: string;
  status?: number;
  /** For /api/v1/tts: the `code`; for mega_tts: BaseResp.StatusCode. */
  code?: number;
  message?: string;
  /** Send the headers and half a body, then destroy the socket. */
  drop?: boolean;
}

export interface VolcengineSlot {
  speakerId: string;
  /** 0 NotFound (never trained), 1 Training, 2 Success, 3 Failed, 4 Active. */
  status: number;
  uploads: number;
  sample?: Buffer;
  format?: string;
  modelType?: number;
}

export interface VolcengineTtsRequest {
  reqid: string;
  cluster: string;
  voiceType: string;
  text: string;
  rate: number;
  encoding: string;
  speedRatio: number;
  volumeRatio: number;
  code: number;
}

export interface VolcengineSpeechServerOptions {
  appId: string;
  token: string;
  /** Speaker ids bought in the console for this APP ID. */
  slots?: string[];
  /** Preset voices of cluster volcano_tts (default BV001_streaming, BV002_streaming). */
  presetVoices?: string[];
  maxUploadsPerSlot?: number;
  /** 3003 when more syntheses than this run at once (default: no limit). */
  maxConcurrent?: number;
  delayMs?: number;
  /** How long each synthesis takes once admitted (default 20 ms): what concurrency is measured over. */
  synthesisMs?: number;
  msPerChar?: number;
}

export interface VolcengineSpeechServer {
  /** `http://127.0.0.1:<port>`: a profile's base URL. */
  baseUrl: string;
  slots: Map<string, VolcengineSlot>;
  ttsRequests: VolcengineTtsRequest[];
  /** Every request's path and the headers it came with. */
  requests: { path: string; headers: http.IncomingHttpHeaders; body: Record<string, unknown> }[];
  finishTraining(speakerId: string, ok: boolean): void;
  fault(fault: VolcengineFault | null): void;
  close(): Promise<void>;
}

export async function startVolcengineSpeechServer(
  options: VolcengineSpeechServerOptions,
): Promise<VolcengineSpeechServer> {
  const slots = new Map<string, VolcengineSlot>(
    (options.slots ?? []).map((speakerId) => [speakerId, { speakerId, status: 0, uploads: 0 }]),
  );
  const presets = new Set(options.presetVoices ?? ['BV001_streaming', 'BV002_streaming']);
  const maxUploads = options.maxUploadsPerSlot ?? 10;
  const msPerChar = options.msPerChar ?? 100;
  const ttsRequests: VolcengineTtsRequest[] = [];
  const requests: VolcengineSpeechServer['requests'] = [];
  const reqids = new Set<string>();
  let running = 0;
  let fault: VolcengineFault | null = null;

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      void handle(req, Buffer.concat(chunks), res).catch(() => res.destroy());
    });
  });

  const send = (res: http.ServerResponse, status: number, body: unknown) => {
    if (res.destroyed) return;
    res.writeHead(status, { 'content-type': 'application/json', 'x-tt-logid': `${Date.now()}` });
    res.end(JSON.stringify(body));
  };

  async function handle(req: http.IncomingMessage, raw: Buffer, res: http.ServerResponse) {
    const path = (req.url ?? '').split('?')[0] ?? '';
    let body: Record<string, unknown> = {};
    try {
      body = JSON.parse(raw.toString('utf8') || '{}');
    } catch {
      // A body that is not JSON is answered as a bad request below.
    }
    requests.push({ path, headers: req.headers, body });
    if (options.delayMs) await new Promise((resolve) => setTimeout(resolve, options.delayMs));

    if (req.headers.authorization !== `Bearer;${options.token}`) {
      return send(res, 401, { message: 'authenticate request: load grant: requested grant not found' });
    }
    const injected = fault && (!fault.path || fault.path === path) ? fault : null;
    if (injected) {
      fault = null;
      if (injected.drop) {
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': '400' });
        res.write('{"reqid": "x", "code": 3000, "data": "AAAA');
        setImmediate(() => res.destroy());
        return;
      }
      if (path === '/api/v1/tts') {
        return send(res, injected.status ?? 500, {
          code: injected.code ?? 3031,
          message: injected.message ?? '处理错误',
        });
      }
      return send(res, injected.status ?? 200, {
        BaseResp: {
          StatusCode: injected.code ?? 1101,
          StatusMessage: injected.message ?? 'AudioUploadError',
        },
      });
    }
    if (path === '/api/v1/mega_tts/audio/upload' || path === '/api/v1/mega_tts/status') {
      return megaTts(req, path, body, res);
    }
    if (path === '/api/v1/tts') return tts(body, res);
    return send(res, 404, { message: 'Not Found' });
  }

  function megaTts(
    req: http.IncomingMessage,
    path: string,
    body: Record<string, unknown>,
    res: http.ServerResponse,
  ) {
    if (req.headers['resource-id'] !== 'volc.megatts.voiceclone') {
      return send(res, 403, { message: 'requested resource not granted' });
    }
    const reply = (code: number, message: string, extra: Record<string, unknown> = {}) =>
      send(res, 200, { BaseResp: { StatusCode: code, StatusMessage: message }, ...extra });
    if (body.appid !== options.appId) {
      return send(res, 401, { message: 'authenticate request: load grant: requested grant not found' });
    }
    const speakerId = typeof body.speaker_id === 'string' ? body.speaker_id : '';
    const slot = slots.get(speakerId);
    if (path === '/api/v1/mega_tts/status') {
      if (!slot) return reply(1107, 'SpeakerIDNotFoundError');
      return reply(0, '', {
        speaker_id: speakerId,
        status: slot.status,
        create_time: Date.now(),
        version: 'V1',
        demo_audio: slot.status === 2 ? 'https://example.invalid/demo.wav' : '',
      });
    }
    if (!slot) return reply(1107, 'SpeakerIDNotFoundError');
    if (body.source !== 2) return reply(1001, 'BadRequestError: source must be 2');
    const audios = Array.isArray(body.audios)
      ? (body.audios as { audio_bytes?: unknown; audio_format?: unknown }[])
      : [];
    if (audios.length !== 1 || typeof audios[0]?.audio_bytes !== 'string') {
      return reply(1001, 'BadRequestError: exactly one audio is required');
    }
    if (slot.uploads >= maxUploads) return reply(1123, 'upload times exceeded');
    const sample = Buffer.from(audios[0].audio_bytes, 'base64');
    const format = String(audios[0].audio_format ?? 'wav');
    if (format === 'wav') {
      try {
        readWav(sample);
      } catch {
        return reply(1105, 'GetAudioDataError');
      }
    }
    slot.uploads++;
    slot.status = 1;
    slot.sample = sample;
    slot.format = format;
    slot.modelType = Number(body.model_type ?? 0);
    return reply(0, '', { speaker_id: speakerId });
  }

  async function tts(body: Record<string, unknown>, res: http.ServerResponse) {
    const app = (body.app ?? {}) as Record<string, unknown>;
    const audio = (body.audio ?? {}) as Record<string, unknown>;
    const request = (body.request ?? {}) as Record<string, unknown>;
    const record: VolcengineTtsRequest = {
      reqid: String(request.reqid ?? ''),
      cluster: String(app.cluster ?? ''),
      voiceType: String(audio.voice_type ?? ''),
      text: String(request.text ?? ''),
      rate: Number(audio.rate ?? 24000),
      encoding: String(audio.encoding ?? 'pcm'),
      speedRatio: Number(audio.speed_ratio ?? 1),
      volumeRatio: Number(audio.volume_ratio ?? 1),
      code: 0,
    };
    ttsRequests.push(record);
    const reply = (status: number, code: number, message: string, extra: Record<string, unknown> = {}) => {
      record.code = code;
      send(res, status, { reqid: record.reqid, code, message, sequence: -1, ...extra });
    };
    if (app.appid !== options.appId) {
      return send(res, 401, { message: 'authenticate request: load grant: requested grant not found' });
    }
    if (
      !record.reqid ||
      request.operation !== 'query' ||
      !app.token ||
      !(body.user as { uid?: unknown })?.uid
    ) {
      return reply(400, 3001, 'invalid request');
    }
    if (reqids.has(record.reqid)) return reply(400, 3006, 'request with the same reqid has finished');
    reqids.add(record.reqid);
    if (![8000, 16000, 24000].includes(record.rate) || !['pcm', 'wav'].includes(record.encoding)) {
      return reply(400, 3001, 'invalid audio params');
    }
    if (Buffer.byteLength(record.text, 'utf8') > 1024) return reply(400, 3010, 'text too long');
    if (!record.text.trim()) return reply(400, 3011, 'illegal input text!');
    const known =
      record.cluster === 'volcano_icl'
        ? [2, 4].includes(slots.get(record.voiceType)?.status ?? -1)
        : record.cluster === 'volcano_tts' && presets.has(record.voiceType);
    if (!known) return reply(400, 3050, 'Fail to feed text, reason Init Engine Instance failed');
    if (options.maxConcurrent !== undefined && running >= options.maxConcurrent) {
      return reply(429, 3003, 'quota exceeded for types: concurrency');
    }
    running++;
    try {
      // Synthesis takes a moment, which is what makes the concurrency rule observable.
      await new Promise((resolve) => setTimeout(resolve, options.synthesisMs ?? 20));
      const chars = [...record.text];
      const perChar = Math.round((record.rate * msPerChar) / 1000);
      const pcm = Buffer.alloc(chars.length * perChar * 2);
      chars.forEach((char, index) => {
        const hz = 200 + ((char.codePointAt(0) ?? 0) % 40) * 10;
        for (let i = 0; i < perChar; i++) {
          const value = Math.round(8000 * Math.sin((2 * Math.PI * hz * i) / record.rate));
          pcm.writeInt16LE(value, (index * perChar + i) * 2);
        }
      });
      reply(200, 3000, 'Success', {
        operation: 'query',
        data: pcm.toString('base64'),
        addition: { duration: String(chars.length * msPerChar) },
      });
    } finally {
      running--;
    }
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    slots,
    ttsRequests,
    requests,
    finishTraining(speakerId, ok) {
      const slot = slots.get(speakerId);
      if (!slot) throw new Error(`no slot ${speakerId}`);
      slot.status = ok ? 2 : 3;
    },
    fault(next) {
      fault = next;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
