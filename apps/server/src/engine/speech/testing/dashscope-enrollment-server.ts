import { randomBytes, randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { readWav } from '../wav';

/**
 * Test support: a local server speaking DashScope's CosyVoice voice-enrolment API
 * (`POST /api/v1/services/audio/tts/customization`, model `voice-enrollment`, actions
 * create_voice / query_voice / list_voice / delete_voice) the way the real one behaves: it checks
 * `Authorization: Bearer <key>` and answers 401 `InvalidApiKey` otherwise, validates the model,
 * target model and prefix, downloads the sample from the URL it was given (as DashScope does,
 * so the app's signed public URL is really exercised) and refuses what it could not fetch or
 * decode, keeps each voice DEPLOYING until the test approves or rejects it, and answers in
 * DashScope's `{output, usage, request_id}` / `{code, message, request_id}` shapes. It can answer
 * after a fixed delay, enforce a request-rate rule (429 Throttling.RateQuota), fail the next
 * request, or cut the connection half-way through an answer.
 */

export type DashScopeVoiceStatus = 'DEPLOYING' | 'OK' | 'UNDEPLOYED';

export interface EnrolledVoice {
  voiceId: string;
  targetModel: string;
  prefix: string;
  url: string;
  /** The sample as downloaded from `url`. */
  sample: Buffer;
  status: DashScopeVoiceStatus;
}

export interface DashScopeEnrollmentRequest {
  action: string;
  authorization: string | undefined;
  input: Record<string, unknown>;
  status: number;
}

export interface DashScopeEnrollmentFault {
  /** Only requests with this action (default: any). */
  action?: string;
  /** Answer with this error... */
  status?: number;
  code?: string;
  message?: string;
  /** ...or send the headers and half a body, then destroy the socket. */
  drop?: boolean;
}

export interface DashScopeEnrollmentServerOptions {
  apiKey: string;
  /** Every answer waits this long first (default 0). */
  delayMs?: number;
  /** 429 Throttling.RateQuota past `maxRequests` within any `windowMs` (default: no limit). */
  rate?: { windowMs: number; maxRequests: number };
  /** The account's clone quota (DashScope: 1000). */
  maxVoices?: number;
  /** How the vendor downloads samples (default: fetch). */
  download?: (url: string) => Promise<Buffer>;
}

export interface DashScopeEnrollmentServer {
  /** `http://127.0.0.1:<port>/api/v1`: the enrolment client's baseUrl. */
  baseUrl: string;
  /** `ws://127.0.0.1:<port>/api-ws/v1/inference`: what a CosyVoice profile would store. */
  websocketUrl: string;
  voices: Map<string, EnrolledVoice>;
  requests: DashScopeEnrollmentRequest[];
  setStatus(voiceId: string, status: DashScopeVoiceStatus): void;
  /** The next matching request fails this way (once). */
  fault(fault: DashScopeEnrollmentFault | null): void;
  close(): Promise<void>;
}

const MAX_SAMPLE_BYTES = 10 * 1024 * 1024;
const MAX_SAMPLE_MS = 60_000;

async function defaultDownload(url: string): Promise<Buffer> {
  const res = await fetch(url);
  if (!res.ok) throw new Error(`HTTP ${res.status}`);
  return Buffer.from(await res.arrayBuffer());
}

export async function startDashScopeEnrollmentServer(
  options: DashScopeEnrollmentServerOptions,
): Promise<DashScopeEnrollmentServer> {
  const voices = new Map<string, EnrolledVoice>();
  const requests: DashScopeEnrollmentRequest[] = [];
  const download = options.download ?? defaultDownload;
  const maxVoices = options.maxVoices ?? 1000;
  const arrivals: number[] = [];
  let fault: DashScopeEnrollmentFault | null = null;

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      void handle(req, Buffer.concat(chunks), res).catch(() => res.destroy());
    });
  });

  async function handle(req: http.IncomingMessage, raw: Buffer, res: http.ServerResponse) {
    const requestId = randomUUID();
    let body: { model?: unknown; input?: Record<string, unknown> } = {};
    try {
      body = JSON.parse(raw.toString('utf8') || '{}');
    } catch {
      // Answered below as a bad request.
    }
    const input = body.input ?? {};
    const record: DashScopeEnrollmentRequest = {
      action: String(input.action ?? ''),
      authorization: req.headers.authorization,
      input,
      status: 0,
    };
    requests.push(record);
    if (options.delayMs) await new Promise((resolve) => setTimeout(resolve, options.delayMs));

    const answer = (status: number, payload: Record<string, unknown>) => {
      record.status = status;
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ ...payload, request_id: requestId }));
    };
    const refuse = (status: number, code: string, message: string) => answer(status, { code, message });

    if (req.method !== 'POST' || req.url !== '/api/v1/services/audio/tts/customization') {
      return refuse(404, 'NotFound', 'Not Found');
    }
    if (req.headers.authorization !== `Bearer ${options.apiKey}`) {
      return refuse(401, 'InvalidApiKey', 'Invalid API-key provided.');
    }
    if (options.rate) {
      const now = Date.now();
      while (arrivals.length && (arrivals[0] as number) <= now - options.rate.windowMs) arrivals.shift();
      if (arrivals.length >= options.rate.maxRequests) {
        return refuse(429, 'Throttling.RateQuota', 'Requests rate limit exceeded, please try again later.');
      }
      arrivals.push(now);
    }
    const injected = fault && (!fault.action || fault.action === record.action) ? fault : null;
    if (injected) {
      fault = null;
      if (injected.drop) {
        record.status = 200;
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': '200' });
        res.write('{"output": {"voice_');
        setImmediate(() => res.destroy());
        return;
      }
      return refuse(
        injected.status ?? 500,
        injected.code ?? 'InternalError',
        injected.message ?? 'Internal error',
      );
    }
    if (body.model !== 'voice-enrollment') return refuse(400, 'InvalidParameter', 'Model not exist.');

    const ok = (output: Record<string, unknown>) => answer(200, { output, usage: { count: 1 } });
    const voiceOf = (id: unknown) => (typeof id === 'string' ? voices.get(id) : undefined);

    switch (record.action) {
      case 'create_voice': {
        const { target_model: targetModel, prefix, url } = input;
        if (typeof targetModel !== 'string' || !/^cosyvoice-[a-z0-9.-]+$/.test(targetModel)) {
          return refuse(400, 'InvalidParameter', 'target_model is invalid');
        }
        if (typeof prefix !== 'string' || !/^[a-z0-9]{1,10}$/.test(prefix)) {
          return refuse(400, 'InvalidParameter', 'prefix must be at most 10 lowercase letters or digits');
        }
        if (typeof url !== 'string' || !/^https?:\/\//.test(url)) {
          return refuse(400, 'InvalidParameter', 'url is invalid');
        }
        if (voices.size >= maxVoices) {
          return refuse(400, 'Audio.VoiceNumberExceeded', `voice number exceeds the limit ${maxVoices}`);
        }
        let sample: Buffer;
        try {
          sample = await download(url);
        } catch {
          return refuse(400, 'InvalidParameter', 'Download audio failed, please check the url');
        }
        if (sample.length > MAX_SAMPLE_BYTES) return refuse(400, 'InvalidParameter', 'audio file too large');
        try {
          const wav = readWav(sample);
          if (wav.sampleRate < 16000) return refuse(400, 'InvalidParameter', 'audio sample rate below 16000');
          if (wav.durationMs > MAX_SAMPLE_MS) return refuse(400, 'InvalidParameter', 'audio too long');
        } catch {
          return refuse(400, 'InvalidParameter', 'audio decode failed');
        }
        const voiceId = `${targetModel}-${prefix}-${randomBytes(8).toString('hex')}`;
        voices.set(voiceId, { voiceId, targetModel, prefix, url, sample, status: 'DEPLOYING' });
        return ok({ voice_id: voiceId });
      }
      case 'query_voice': {
        const voice = voiceOf(input.voice_id);
        if (!voice) return refuse(400, 'InvalidParameter', 'voice not found');
        const now = new Date().toISOString().replace('T', ' ').slice(0, 19);
        return ok({
          gmt_create: now,
          gmt_modified: now,
          resource_link: voice.url,
          target_model: voice.targetModel,
          status: voice.status,
        });
      }
      case 'list_voice': {
        const pageIndex = Number(input.page_index ?? 0);
        const pageSize = Number(input.page_size ?? 10);
        const prefix = typeof input.prefix === 'string' ? input.prefix : undefined;
        const list = [...voices.values()]
          .filter((voice) => !prefix || voice.prefix === prefix)
          .slice(pageIndex * pageSize, (pageIndex + 1) * pageSize)
          .map((voice) => ({
            voice_id: voice.voiceId,
            status: voice.status,
            gmt_create: '',
            gmt_modified: '',
          }));
        return ok({ voice_list: list });
      }
      case 'delete_voice': {
        const voice = voiceOf(input.voice_id);
        if (!voice) return refuse(400, 'InvalidParameter', 'voice not found');
        voices.delete(voice.voiceId);
        return ok({});
      }
      default:
        return refuse(400, 'InvalidParameter', `action ${record.action} is not supported`);
    }
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/api/v1`,
    websocketUrl: `ws://127.0.0.1:${port}/api-ws/v1/inference`,
    voices,
    requests,
    setStatus(voiceId, status) {
      const voice = voices.get(voiceId);
      if (!voice) throw new Error(`no voice ${voiceId}`);
      voice.status = status;
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
