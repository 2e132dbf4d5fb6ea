import { createHmac, randomUUID, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { type WebSocket, WebSocketServer } from 'ws';
import { fakeSpeech, pcmBytes, splitFrames } from './fake-speech';

/**
 * Test support: a local stand-in for Tencent Cloud 实时语音合成 (`/stream_ws`,
 * Action=TextToStreamAudioWS, https://cloud.tencent.com/document/product/1073/37933) behaving as
 * the real one does for a client: it checks the parameters and the HMAC-SHA1 signature over
 * "GET" + its own host + path + "?" + the sorted decoded parameters (recomputed here, not shared
 * with the client's signer), answers the handshake with `{code: 0, message: "success", session_id,
 * request_id, message_id}` or a non-zero code and a close, then sends the text "spoken" by
 * `fakeSpeech` (`msPerChar` per character at the requested SampleRate) as binary PCM frames,
 * subtitles when EnableSubtitle asks for them, and `{final: 1}`.
 *
 * Rules, with small configurable values: the account's concurrency (`maxConcurrent` open
 * syntheses; the next handshake gets 4006), and the client must close after `final` (the server
 * cuts a client that lingers for `idleTimeoutMs`, recorded as `lingered`). Codes: 4001 parameters,
 * 4002 authentication, 4006 concurrency, as the 实时语音 API 2.0 family numbers them.
 */

export interface TencentTtsTuning {
  msPerChar: number;
  /** Audio per binary frame. */
  frameMs: number;
  /** Wall time between two frames. */
  frameIntervalMs: number;
  /** Wall time from the handshake to the first frame. */
  firstAudioDelayMs: number;
  /** Cut frames in the middle of samples. */
  oddFrames: boolean;
}

export interface TencentTtsFault {
  /** Strike once this many audio frames went out. */
  afterFrames: number;
  /** Answer `{code, message}` and close; without a code the socket is dropped (no close frame). */
  code?: number;
  message?: string;
}

export interface TencentTtsServerOptions extends Partial<TencentTtsTuning> {
  appId: string;
  secretId: string;
  secretKey: string;
  maxConcurrent?: number;
  idleTimeoutMs?: number;
  /** Wall clock for the signature's timestamp check (default Date.now). */
  now?: () => number;
}

export interface TencentTtsConnection {
  index: number;
  /** Decoded query parameters, the signature included. */
  params: Record<string, string>;
  /** The handshake's verdict: 0, or the code it was refused with. */
  handshakeCode: number | null;
  /** Every JSON message the server sent. */
  sent: Record<string, unknown>[];
  framesSent: number;
  /** How many frames the text has in all (0 until the handshake was accepted). */
  framesTotal: number;
  /** The client kept the socket after `final` until the server cut it. */
  lingered: boolean;
  /** Who closed first, once closed. */
  closedBy: 'client' | 'server' | null;
  closed: Promise<void>;
}

export interface TencentTtsServer {
  /** `ws://127.0.0.1:<port>`: what the synthesiser's `host` option takes. */
  url: string;
  connections: TencentTtsConnection[];
  tune(tuning: Partial<TencentTtsTuning>): void;
  /** Makes connections opened from now on fail mid-stream. */
  fault(fault: TencentTtsFault | null): void;
  close(): Promise<void>;
}

const NINETY_DAYS_S = 90 * 86_400;
const isInteger = (value: string | undefined) => value !== undefined && /^\d+$/.test(value);
const isNumberIn = (value: string | undefined, min: number, max: number) =>
  value !== undefined && /^-?\d+(\.\d+)?$/.test(value) && Number(value) >= min && Number(value) <= max;

export async function startTencentTtsServer(options: TencentTtsServerOptions): Promise<TencentTtsServer> {
  const now = options.now ?? Date.now;
  const maxConcurrent = options.maxConcurrent ?? 20;
  const idleTimeoutMs = options.idleTimeoutMs ?? 15_000;
  let tuning: TencentTtsTuning = {
    msPerChar: options.msPerChar ?? 30,
    frameMs: options.frameMs ?? 20,
    frameIntervalMs: options.frameIntervalMs ?? 2,
    firstAudioDelayMs: options.firstAudioDelayMs ?? 0,
    oddFrames: options.oddFrames ?? false,
  };
  let fault: TencentTtsFault | null = null;
  let running = 0;
  const connections: TencentTtsConnection[] = [];

  /** Parameters (4001), then AppID, SecretId, signature and its validity (4002). */
  function authenticate(host: string, path: string, params: Record<string, string>) {
    for (const name of [
      'Action',
      'AppId',
      'SecretId',
      'Timestamp',
      'Expired',
      'SessionId',
      'Text',
      'Signature',
    ]) {
      if (!params[name]) return { code: 4001, message: `缺少参数 ${name}` };
    }
    if (params.Action !== 'TextToStreamAudioWS')
      return { code: 4001, message: `Action 不合法: ${params.Action}` };
    if (!isInteger(params.Timestamp) || !isInteger(params.Expired)) {
      return { code: 4001, message: 'Timestamp/Expired 不合法' };
    }
    if (params.Codec !== undefined && !['pcm', 'mp3'].includes(params.Codec)) {
      return { code: 4001, message: `Codec 不合法: ${params.Codec}` };
    }
    if (params.SampleRate !== undefined && !['8000', '16000', '24000'].includes(params.SampleRate)) {
      return { code: 4001, message: `SampleRate 不合法: ${params.SampleRate}` };
    }
    if (params.Speed !== undefined && !isNumberIn(params.Speed, -2, 6)) {
      return { code: 4001, message: `Speed 不合法: ${params.Speed}` };
    }
    if (params.Volume !== undefined && !isNumberIn(params.Volume, -10, 10)) {
      return { code: 4001, message: `Volume 不合法: ${params.Volume}` };
    }
    if (params.VoiceType !== undefined && !isInteger(params.VoiceType)) {
      return { code: 4001, message: `VoiceType 不合法: ${params.VoiceType}` };
    }
    if (params.ModelType !== undefined && params.ModelType !== '1') {
      return { code: 4001, message: `ModelType 不合法: ${params.ModelType}` };
    }

    const signed = Object.keys(params)
      .filter((key) => key !== 'Signature')
      .sort()
      .map((key) => `${key}=${params[key]}`)
      .join('&');
    const expected = Buffer.from(
      createHmac('sha1', options.secretKey).update(`GET${host}${path}?${signed}`, 'utf8').digest('base64'),
    );
    const given = Buffer.from(params.Signature as string);
    const refused = { code: 4002, message: '鉴权失败' };
    if (params.AppId !== options.appId || params.SecretId !== options.secretId) return refused;
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return refused;
    const nowS = Math.floor(now() / 1000);
    const ts = Number(params.Timestamp);
    const until = Number(params.Expired);
    if (until <= ts || until - ts >= NINETY_DAYS_S) return { code: 4002, message: '签名有效期不合法' };
    if (until < nowS || Math.abs(ts - nowS) > 3600) return { code: 4002, message: '签名已过期' };
    if (running >= maxConcurrent) return { code: 4006, message: '账号当前调用并发超限' };
    return null;
  }

  const wss = new WebSocketServer({ noServer: true });

  const serve = (ws: WebSocket, req: http.IncomingMessage, url: URL) => {
    let markClosed = () => {};
    const connection: TencentTtsConnection = {
      index: connections.length,
      params: {},
      handshakeCode: null,
      sent: [],
      framesSent: 0,
      framesTotal: 0,
      lingered: false,
      closedBy: null,
      closed: new Promise<void>((resolve) => {
        markClosed = resolve;
      }),
    };
    connections.push(connection);
    for (const [key, value] of url.searchParams) connection.params[key] = value;
    const params = connection.params;
    const taskTuning = { ...tuning };
    const taskFault = fault;
    const requestId = randomUUID();
    let messages = 0;
    let counted = false;
    const timers = new Set<NodeJS.Timeout>();
    const later = (ms: number, fn: () => void) => {
      const timer = setTimeout(() => {
        timers.delete(timer);
        fn();
      }, ms);
      timers.add(timer);
    };
    const release = () => {
      if (counted) running--;
      counted = false;
    };
    const send = (body: Record<string, unknown>) => {
      const full = {
        code: 0,
        message: 'success',
        session_id: params.SessionId ?? '',
        request_id: requestId,
        message_id: `${requestId}_${messages++}`,
        ...body,
      };
      connection.sent.push(full);
      if (ws.readyState === ws.OPEN) ws.send(JSON.stringify(full));
    };
    const serverClose = (terminate = false) => {
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      release();
      if (!connection.closedBy) connection.closedBy = 'server';
      if (terminate) ws.terminate();
      else ws.close(1000);
    };
    const refuse = (code: number, message: string) => {
      send({ code, message });
      serverClose();
    };
    ws.on('close', () => {
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      release();
      if (!connection.closedBy) connection.closedBy = 'client';
      markClosed();
    });
    ws.on('message', () => {
      // The v1 protocol takes nothing after the handshake.
      refuse(4001, '实时语音合成不接受客户端消息');
    });

    const verdict = authenticate(req.headers.host ?? '', url.pathname, params);
    connection.handshakeCode = verdict ? verdict.code : 0;
    if (verdict) return refuse(verdict.code, verdict.message);
    counted = true;
    running++;
    send({});

    const rate = Number(params.SampleRate ?? 16000);
    const text = params.Text as string;
    const frames = splitFrames(
      pcmBytes(fakeSpeech(text, rate, taskTuning.msPerChar)),
      Math.max(2, Math.round((rate / 1000) * 2 * taskTuning.frameMs)),
      taskTuning.oddFrames,
    );
    connection.framesTotal = frames.length;
    const subtitles = /^true$/i.test(params.EnableSubtitle ?? '');
    const next = (i: number) => {
      if (connection.closedBy) return;
      if (taskFault && i === taskFault.afterFrames) {
        if (taskFault.code === undefined) return serverClose(true);
        return refuse(taskFault.code, taskFault.message ?? '');
      }
      if (i === frames.length) {
        send({ final: 1 });
        // The slot stays taken until the socket closes: that is why the client must close.
        later(idleTimeoutMs, () => {
          connection.lingered = true;
          serverClose();
        });
        return;
      }
      const frame = frames[i] as Buffer;
      if (ws.readyState === ws.OPEN) ws.send(frame, { binary: true });
      connection.framesSent = i + 1;
      if (i === 0 && subtitles) {
        send({
          result: {
            subtitles: [...text].map((char, index) => ({
              Text: char,
              BeginTime: index * taskTuning.msPerChar,
              EndTime: (index + 1) * taskTuning.msPerChar,
              BeginIndex: index,
              EndIndex: index + 1,
              Phoneme: null,
            })),
          },
        });
      }
      later(taskTuning.frameIntervalMs, () => next(i + 1));
    };
    later(taskTuning.firstAudioDelayMs, () => next(0));
  };

  const server = http.createServer((_req, res) => {
    res.writeHead(404).end();
  });
  server.on('upgrade', (req: http.IncomingMessage, socket: Duplex, head: Buffer) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (url.pathname !== '/stream_ws') {
      socket.end('HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n');
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => serve(ws, req, url));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `ws://127.0.0.1:${port}`,
    connections,
    tune(next) {
      tuning = { ...tuning, ...next };
    },
    fault(next) {
      fault = next;
    },
    close() {
      for (const client of wss.clients) client.terminate();
      wss.close();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
