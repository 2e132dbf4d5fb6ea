import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import { type WebSocket, WebSocketServer } from 'ws';

/**
 * Test support: a local server speaking the FunASR runtime's websocket protocol the way the C++
 * 2pass server (runtime/websocket/bin/websocket-server-2pass.cpp, the funasr-runtime-sdk-online
 * image) speaks it, per runtime/docs/websocket_protocol.md (modelscope/FunASR @ 3c58cb5):
 * a JSON configuration first, binary PCM, then {"is_speaking": false}; results as JSON with
 * 2pass-online increments, 2pass-offline sentences and `is_final: true` on the last one.
 *
 * What the real server leaves out and the fake adds so tests can check a client:
 * - FunASR has no authentication; deployments put a reverse proxy in front that refuses the
 *   upgrade. With `token` set the fake does the same: no `Authorization: Bearer <token>`, HTTP 401.
 * - FunASR does not refuse a fast client (its own C++ file client sends unpaced), but a live
 *   stream is meant to arrive at chunk pace (funasr_wss_client.py sleeps one chunk between
 *   sends). The fake refuses a streaming (online/2pass) client that runs more than
 *   `realTimeToleranceMs` ahead of real time, so pacing is checkable. Offline mode is exempt.
 * - An idle timeout, as a proxy's read timeout would impose: no message for `idleTimeoutMs`
 *   before the end flag and the fake closes the connection (1001).
 * - Protocol slips the real server would silently ignore (no final ever comes) are reported at
 *   once as an error message, so a test fails loudly instead of timing out.
 */

export type FunAsrMode = '2pass' | 'online' | 'offline';

/** The audio of one connection so far, as `listen` sees it. */
export interface FunAsrHeard {
  pcm: Int16Array;
  sampleRate: number;
  mode: FunAsrMode;
  /** The configuration's `hotwords` string, parsed; {} when none was sent. */
  hotwords: Record<string, number>;
  itn: boolean;
  /** True once the client sent the end flag: this is the whole audio. */
  final: boolean;
}

/**
 * What the caller said so far. An array is a list of sentences: all but the last have ended
 * (the server's VAD saw their end), so a 2pass server corrects them before the audio ends.
 */
export type FunAsrListen = (heard: FunAsrHeard) => string | string[];

/** One connection as the fake saw it. */
export interface FunAsrFakeSession {
  headers: http.IncomingHttpHeaders;
  /** The first JSON message, as sent. */
  config: Record<string, unknown> | undefined;
  /** Every text message, parsed, in order (the configuration included). */
  texts: Record<string, unknown>[];
  /** Sizes of the binary messages, in bytes. */
  frames: number[];
  audioMs: number;
  /** How far the client's audio ever ran ahead of real time (streaming modes), ms. */
  maxLeadMs: number;
  /** Every result sent, in order. */
  results: Record<string, unknown>[];
  ended: boolean;
  /**
   * Wall-clock times (performance.timeOrigin + performance.now(), comparable across processes) of
   * the end flag and of the final result: the delay the server actually gave, as a bench reports it.
   */
  endedAt?: number;
  finalAt?: number;
  /** Resolves when the connection is gone; `byServer` when the fake closed it. */
  closed: Promise<{ code: number; byServer: boolean }>;
}

export type FunAsrFailure =
  /** The server process dies: the TCP connection drops without a close frame. */
  | 'drop'
  /** The Python runtime server's way: a result carrying `error`, then the connection closes. */
  | 'error';

export interface FunAsrServerOptions {
  /** When set, the upgrade needs `Authorization: Bearer <token>`; others get HTTP 401. */
  token?: string;
  /** What was said (default: nothing). */
  listen?: FunAsrListen;
  /** Close a connection that sent nothing for this long before its end flag (default 10 s). */
  idleTimeoutMs?: number;
  /** How far a streaming client may run ahead of real time (default 1000 ms); null: no check. */
  realTimeToleranceMs?: number | null;
  /** Behave as the offline file server (funasr-wss-server): one `mode: 'offline'` result. */
  fileServer?: boolean;
}

export interface FunAsrServer {
  /** `ws://127.0.0.1:<port>`: what a recognition profile's address would be. */
  url: string;
  sessions: FunAsrFakeSession[];
  listen(fn: FunAsrListen): void;
  /** Later connections fail once they received `afterAudioMs` of audio; null: no failure. */
  failMidStream(plan: { afterAudioMs: number; how: FunAsrFailure } | null): void;
  /** Later finals are sent after this delay; 'never' leaves the client waiting. */
  finalDelay(ms: number | 'never'): void;
  /** Resolves once `count` connections were accepted in all. */
  connected(count: number): Promise<void>;
  close(): Promise<void>;
}

const MODES: readonly string[] = ['2pass', 'online', 'offline'];

/** Why a configuration would leave the real server unable to decode, or null when it is fine. */
function configProblem(config: Record<string, unknown>): string | null {
  if (typeof config.mode !== 'string' || !MODES.includes(config.mode))
    return `unsupported mode: ${config.mode}`;
  const chunk = config.chunk_size;
  // The 2pass server builds its decoder only from a 3-number chunk_size with a non-zero middle.
  if (!Array.isArray(chunk) || chunk.length !== 3 || !chunk.every(Number.isInteger) || chunk[1] === 0) {
    return 'Wrong chunk_size!';
  }
  if (config.wav_format !== undefined && String(config.wav_format).toLowerCase() !== 'pcm') {
    return 'ERROR. Real-time transcription service ONLY SUPPORT PCM stream.';
  }
  if (config.audio_fs !== 8000 && config.audio_fs !== 16000)
    return `unsupported audio_fs: ${config.audio_fs}`;
  if (config.itn !== undefined && typeof config.itn !== 'boolean') return 'itn must be a boolean';
  if (config.hotwords !== undefined && typeof config.hotwords !== 'string') {
    return 'hotwords must be a string';
  }
  if (typeof config.is_speaking !== 'boolean' || !config.is_speaking) return 'is_speaking must be true';
  return null;
}

/** The server's reading of the hotwords string: FST weights from a JSON object; {} otherwise. */
function parseHotwords(raw: unknown): Record<string, number> {
  if (typeof raw !== 'string' || raw === '') return {};
  try {
    const parsed: unknown = JSON.parse(raw);
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) {
      return Object.fromEntries(Object.entries(parsed).filter(([, weight]) => Number.isInteger(weight)));
    }
  } catch {
    // The real server then treats the string as plain nn hotwords; the fake has no use for those.
  }
  return {};
}

const wallClock = () => performance.timeOrigin + performance.now();

const sentencesOf = (said: string | string[]) => (typeof said === 'string' ? [said] : said);

export async function startFunAsrServer(options: FunAsrServerOptions = {}): Promise<FunAsrServer> {
  const sessions: FunAsrFakeSession[] = [];
  let listen: FunAsrListen = options.listen ?? (() => '');
  let failure: { afterAudioMs: number; how: FunAsrFailure } | null = null;
  let finalDelayMs: number | 'never' = 0;
  const idleTimeoutMs = options.idleTimeoutMs ?? 10_000;
  const tolerance = options.realTimeToleranceMs === undefined ? 1000 : options.realTimeToleranceMs;
  const waiters: { count: number; resolve: () => void }[] = [];
  const sockets = new Set<Socket>();
  const timers = new Set<NodeJS.Timeout>();

  const later = (ms: number, fn: () => void) => {
    const timer = setTimeout(() => {
      timers.delete(timer);
      fn();
    }, ms);
    timers.add(timer);
    return timer;
  };
  const cancel = (timer: NodeJS.Timeout | undefined) => {
    if (!timer) return;
    clearTimeout(timer);
    timers.delete(timer);
  };

  const http401 = (socket: Socket) => {
    const body = JSON.stringify({ message: 'Unauthorized' });
    socket.end(
      'HTTP/1.1 401 Unauthorized\r\nWWW-Authenticate: Bearer\r\nContent-Type: application/json\r\n' +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  };

  const serve = (ws: WebSocket, request: http.IncomingMessage) => {
    let resolveClosed: (value: { code: number; byServer: boolean }) => void = () => {};
    const session: FunAsrFakeSession = {
      headers: request.headers,
      config: undefined,
      texts: [],
      frames: [],
      audioMs: 0,
      maxLeadMs: 0,
      results: [],
      ended: false,
      closed: new Promise((resolve) => {
        resolveClosed = resolve;
      }),
    };
    sessions.push(session);
    for (const waiter of waiters.splice(0)) {
      if (sessions.length >= waiter.count) waiter.resolve();
      else waiters.push(waiter);
    }

    const plan = failure;
    const delay = finalDelayMs;
    let byServer = false;
    let chunks: Int16Array[] = [];
    let samples = 0;
    let firstAudioAt: number | undefined;
    let decodedMs = 0;
    // Sentences already corrected and sent (2pass), and the current sentence's text sent so far.
    let sentSentences = 0;
    let onlineText = '';
    let idle: NodeJS.Timeout | undefined;

    const send = (result: Record<string, unknown>) => {
      session.results.push(result);
      ws.send(JSON.stringify(result));
    };
    const closeWith = (code: number, reason: string) => {
      byServer = true;
      cancel(idle);
      ws.close(code, reason);
    };
    const refuse = (error: string) => {
      send({
        mode: session.config?.mode ?? '2pass',
        wav_name: session.config?.wav_name,
        is_final: false,
        error,
      });
      closeWith(1011, 'error');
    };
    const armIdle = () => {
      cancel(idle);
      idle = later(idleTimeoutMs, () => closeWith(1001, 'idle timeout'));
    };
    armIdle();

    const heard = (final: boolean): FunAsrHeard => {
      const pcm = new Int16Array(samples);
      let at = 0;
      for (const chunk of chunks) {
        pcm.set(chunk, at);
        at += chunk.length;
      }
      chunks = [pcm];
      const config = session.config ?? {};
      return {
        pcm,
        sampleRate: config.audio_fs as number,
        mode: config.mode as FunAsrMode,
        hotwords: parseHotwords(config.hotwords),
        itn: config.itn !== false,
        final,
      };
    };
    const base = () => ({ wav_name: session.config?.wav_name ?? 'wav-default-id' });
    const stamp = () => `[[0,${Math.round(session.audioMs)}]]`;

    /** One streaming decode step: increments of the current sentence, corrections of ended ones. */
    const decodeStep = () => {
      const mode = session.config?.mode as FunAsrMode;
      const sentences = sentencesOf(listen(heard(false)));
      const ended = sentences.slice(0, -1);
      for (; sentSentences < ended.length; sentSentences++) {
        const sentence = ended[sentSentences] ?? '';
        if (mode === 'online') {
          const rest = sentence.startsWith(onlineText) ? sentence.slice(onlineText.length) : '';
          if (rest) send({ ...base(), mode: '2pass-online', text: rest, is_final: false });
        } else {
          send({ ...base(), mode: '2pass-offline', text: sentence, timestamp: stamp(), is_final: false });
        }
        onlineText = '';
      }
      if (mode === 'offline') return;
      const current = sentences.at(-1) ?? '';
      // A streaming model only appends; a revision waits for the 2pass correction.
      if (current.startsWith(onlineText) && current.length > onlineText.length) {
        send({ ...base(), mode: '2pass-online', text: current.slice(onlineText.length), is_final: false });
        onlineText = current;
      }
    };

    const finish = () => {
      session.finalAt = wallClock();
      const mode = session.config?.mode as FunAsrMode;
      const sentences = sentencesOf(listen(heard(true))).slice(sentSentences);
      if (options.fileServer) {
        send({ ...base(), mode: 'offline', text: sentences.join(''), timestamp: stamp(), is_final: false });
        return;
      }
      if (mode === 'online') {
        const text = sentences.join('');
        const rest = text.startsWith(onlineText) ? text.slice(onlineText.length) : text;
        send({ ...base(), mode: '2pass-online', text: rest, is_final: true });
        return;
      }
      const spoken = sentences.filter((sentence) => sentence !== '');
      // The 2pass server's last result has no mode when the final pass found no speech.
      if (spoken.length === 0) return send({ ...base(), text: '', timestamp: stamp(), is_final: true });
      for (const [i, sentence] of spoken.entries()) {
        send({
          ...base(),
          mode: '2pass-offline',
          text: sentence,
          timestamp: stamp(),
          is_final: i === spoken.length - 1,
        });
      }
    };

    ws.on('message', (data: Buffer, isBinary: boolean) => {
      if (session.ended) return;
      armIdle();
      if (!isBinary) {
        let message: Record<string, unknown>;
        try {
          message = JSON.parse(data.toString('utf8'));
        } catch {
          return refuse('bad json message');
        }
        session.texts.push(message);
        if (!session.config) {
          session.config = message;
          const problem = configProblem(message);
          if (problem) return refuse(problem);
          return;
        }
        if (message.is_speaking === false) {
          session.ended = true;
          session.endedAt = wallClock();
          cancel(idle);
          if (delay === 'never') return;
          later(delay, () => {
            if (ws.readyState === ws.OPEN) finish();
          });
        }
        return;
      }
      if (!session.config) return refuse('audio frame discarded: chunk_size is not configured');
      if (data.length % 2 !== 0) return refuse('audio frame is not 16-bit PCM');
      const now = performance.now();
      firstAudioAt ??= now;
      session.frames.push(data.length);
      const pcm = new Int16Array(data.length / 2);
      for (let i = 0; i < pcm.length; i++) pcm[i] = data.readInt16LE(i * 2);
      chunks.push(pcm);
      samples += pcm.length;
      const sampleRate = session.config.audio_fs as number;
      session.audioMs = (samples * 1000) / sampleRate;

      const mode = session.config.mode as FunAsrMode;
      if (mode !== 'offline') {
        const lead = session.audioMs - (now - firstAudioAt);
        session.maxLeadMs = Math.max(session.maxLeadMs, lead);
        if (tolerance !== null && lead > tolerance) {
          return refuse(
            `audio arrives ${Math.round(lead)} ms ahead of real time; send one chunk per chunk duration`,
          );
        }
      }
      if (plan && session.audioMs >= plan.afterAudioMs) {
        if (plan.how === 'drop') {
          byServer = true;
          return ws.terminate();
        }
        return refuse('online inference failed: CUDA error: out of memory');
      }
      // The online model decodes once per chunk_size[1] * 60 ms of audio.
      const stepMs = ((session.config.chunk_size as number[])[1] ?? 10) * 60;
      while (session.audioMs - decodedMs >= stepMs) {
        decodedMs += stepMs;
        if (options.fileServer) continue;
        decodeStep();
      }
    });
    ws.on('close', (code) => {
      cancel(idle);
      resolveClosed({ code, byServer });
    });
    ws.on('error', () => {});
  };

  const wss = new WebSocketServer({ noServer: true, perMessageDeflate: false });
  const server = http.createServer((_req, res) => {
    res.writeHead(426, { 'content-type': 'text/plain' });
    res.end('websocket only');
  });
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  server.on('upgrade', (request: http.IncomingMessage, socket: Socket, head: Buffer) => {
    if (options.token !== undefined && request.headers.authorization !== `Bearer ${options.token}`) {
      return http401(socket);
    }
    wss.handleUpgrade(request, socket, head, (ws) => serve(ws, request));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `ws://127.0.0.1:${port}`,
    sessions,
    listen(fn) {
      listen = fn;
    },
    failMidStream(plan) {
      failure = plan;
    },
    finalDelay(ms) {
      finalDelayMs = ms;
    },
    connected(count) {
      if (sessions.length >= count) return Promise.resolve();
      return new Promise<void>((resolve) => waiters.push({ count, resolve }));
    },
    async close() {
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      for (const client of wss.clients) client.terminate();
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A script for `listen`: `text` once any sample is louder than `threshold`, nothing otherwise. */
export function saysWhenLoud(text: string | string[], threshold = 500): FunAsrListen {
  return ({ pcm }) => (pcm.some((sample) => Math.abs(sample) > threshold) ? text : '');
}
