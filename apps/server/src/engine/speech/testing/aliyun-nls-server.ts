import { createHmac, randomBytes, randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { type WebSocket, WebSocketServer } from 'ws';

/**
 * Test support: a local stand-in for Aliyun's 智能语音交互, speaking both halves the recogniser
 * needs, as the vendor documents them:
 *
 * - CreateToken (POP RPC, `GET|POST /?Action=CreateToken&Version=2019-02-28...`): the signature is
 *   recomputed here independently of the client's signer and compared, the timestamp must be
 *   within 15 minutes and each SignatureNonce is accepted once; failures answer POP's error body
 *   `{ RequestId, HostId, Code, Message, Recommend }` (SignatureDoesNotMatch 400,
 *   InvalidAccessKeyId.NotFound 404, ...).
 * - The NLS gateway (`/ws/v1`, namespace SpeechTranscriber): the token comes in the `token` query
 *   parameter or the `X-NLS-Token` header; an unknown one is refused at the handshake with 403
 *   Forbidden and an expired one with TaskFailed 40000001. StartTranscription → TranscriptionStarted,
 *   binary PCM, SentenceBegin / TranscriptionResultChanged / SentenceEnd, StopTranscription →
 *   TranscriptionCompleted, TaskFailed with the documented status codes (40000004 idle timeout
 *   after `idleTimeoutMs` without any message, 41010101 sample rate, 40020105 appkey...).
 *
 * The gateway splits speech into sentences the way the service does: a sentence begins at the
 * first 20 ms frame with energy and ends after `max_sentence_silence` (default 800 ms, as
 * documented) of quiet audio or at StopTranscription. What was said is decided by `hear`, called
 * with the sentence's audio so far for each partial and for the final result.
 *
 * Real time: Aliyun requires audio "at a real-time or near-real-time rate" and documents no exact
 * threshold, nor a status code for breaking it. This server allows `burstMs` of audio ahead of
 * the wall clock plus `maxSpeedup` times real time, and answers anything faster with TaskFailed
 * 40000000 (the documented catch-all client error) so tests can tell a client that paces from one
 * that does not.
 */

export interface NlsStartPayload {
  format?: string;
  sample_rate?: number;
  enable_intermediate_result?: boolean;
  enable_punctuation_prediction?: boolean;
  enable_inverse_text_normalization?: boolean;
  max_sentence_silence?: number;
  vocabulary_id?: string;
  customization_id?: string;
  [field: string]: unknown;
}

/** What `hear` is asked about: one sentence's audio so far. */
export interface NlsHeard {
  pcm: Int16Array;
  /** Sentence number, from 1. */
  index: number;
  /** True for the sentence's final result (SentenceEnd), false for a partial. */
  final: boolean;
  durationMs: number;
  /** How much audio the session has received in all. */
  sessionMs: number;
  start: NlsStartPayload;
}

/** A string is shorthand for `{ text }`; `fail` ends the task with TaskFailed instead. */
export type NlsReply = string | { text?: string; fail?: { status: number; statusText: string } };
export type NlsHear = (heard: NlsHeard) => NlsReply;

export interface NlsMessage {
  header: {
    namespace: string;
    name: string;
    status?: number;
    status_text?: string;
    message_id: string;
    task_id: string;
    appkey?: string;
  };
  payload?: Record<string, unknown>;
}

export interface TokenRequestRecord {
  method: string;
  params: Record<string, string>;
  status: number;
  /** POP error code, or the issued token's id. */
  code?: string;
  token?: string;
}

export interface NlsSessionRecord {
  token: string;
  /** How the token came: the `X-NLS-Token` header or the `token` query parameter. */
  tokenVia: 'header' | 'query';
  /** Every text message the client sent, parsed. */
  received: NlsMessage[];
  /** Every event this server sent. */
  sent: NlsMessage[];
  audioBytes: number;
  /** Largest lead of received audio over the wall clock since TranscriptionStarted, in ms. */
  maxLeadMs: number;
  failure?: { status: number; statusText: string };
  closed: boolean;
  /** The client went away before TranscriptionCompleted (the gateway logs 40010004). */
  clientLeftEarly: boolean;
}

export interface FakeAliyunNlsOptions {
  /** AccessKey ID → secret. */
  accessKeys?: Record<string, string>;
  /** The project's appkey; any other gets 40020105. */
  appKey?: string;
  tokenTtlMs?: number;
  /** Time for token expiry and the Timestamp check (default Date.now). */
  now?: () => number;
  idleTimeoutMs?: number;
  maxSpeedup?: number;
  burstMs?: number;
  /** Audio between two TranscriptionResultChanged events of one sentence. */
  partialEveryMs?: number;
  /** RMS above which a 20 ms frame counts as speech. */
  energyThreshold?: number;
  hear?: NlsHear;
}

export interface FakeAliyunNls {
  /** `http://127.0.0.1:<port>/`: a profile's token URL. */
  tokenUrl: string;
  /** `ws://127.0.0.1:<port>/ws/v1`: a profile's gateway URL. */
  gatewayUrl: string;
  tokenRequests: TokenRequestRecord[];
  sessions: NlsSessionRecord[];
  /** Issues a token directly (as if CreateToken had), for tests that drive the gateway by hand. */
  issueToken(ttlMs?: number): string;
  /** Forgets every issued token, as if they had been revoked: the gateway answers 403. */
  revokeTokens(): void;
  /** When an issued token expires (epoch ms), or undefined for one never issued or revoked: lets
   * other gateway fakes (speech synthesis) share this CreateToken endpoint. */
  tokenExpiresAt(token: string): number | undefined;
  hear(fn: NlsHear): void;
  /** Resolves when `count` gateway sessions have closed. */
  closedSessions(count: number): Promise<void>;
  close(): Promise<void>;
}

const hex32 = () => randomBytes(16).toString('hex');
const HEX32 = /^[0-9a-f]{32}$/;
const FRAME_MS = 20;
const TIMESTAMP_WINDOW_MS = 15 * 60_000;

/** RFC 3986 unreserved characters stay, every other UTF-8 byte becomes %XX (upper case). */
function popEncode(value: string): string {
  let out = '';
  for (const byte of Buffer.from(value, 'utf8')) {
    const c = String.fromCharCode(byte);
    out += /[A-Za-z0-9\-_.~]/.test(c) ? c : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

/** Query or form pairs, decoded; `+` is a space in both. */
function parsePairs(raw: string): Record<string, string> {
  const params: Record<string, string> = {};
  for (const part of raw.split('&')) {
    if (!part) continue;
    const eq = part.indexOf('=');
    const decode = (s: string) => decodeURIComponent(s.replace(/\+/g, ' '));
    params[decode(eq < 0 ? part : part.slice(0, eq))] = eq < 0 ? '' : decode(part.slice(eq + 1));
  }
  return params;
}

function popStringToSign(method: string, params: Record<string, string>): string {
  const names = Object.keys(params)
    .filter((n) => n !== 'Signature')
    .sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
  const canonical = names.map((n) => `${popEncode(n)}=${popEncode(params[n] ?? '')}`).join('&');
  return `${method}&${popEncode('/')}&${popEncode(canonical)}`;
}

function rms(pcm: Int16Array, from: number, to: number): number {
  let sum = 0;
  for (let i = from; i < to; i++) sum += (pcm[i] as number) ** 2;
  return Math.sqrt(sum / Math.max(1, to - from));
}

export async function startFakeAliyunNls(options: FakeAliyunNlsOptions = {}): Promise<FakeAliyunNls> {
  const now = options.now ?? Date.now;
  const accessKeys = options.accessKeys ?? {};
  const tokenTtlMs = options.tokenTtlMs ?? 24 * 3600_000;
  const idleTimeoutMs = options.idleTimeoutMs ?? 10_000;
  const maxSpeedup = options.maxSpeedup ?? 2;
  const burstMs = options.burstMs ?? 1_000;
  const partialEveryMs = options.partialEveryMs ?? 200;
  const energyThreshold = options.energyThreshold ?? 500;
  let hear: NlsHear = options.hear ?? (() => '');

  const tokens = new Map<string, number>();
  const usedNonces = new Set<string>();
  const tokenRequests: TokenRequestRecord[] = [];
  const sessions: NlsSessionRecord[] = [];
  const closeWaiters: { count: number; resolve: () => void }[] = [];
  const issueToken = (ttlMs = tokenTtlMs) => {
    const id = hex32();
    tokens.set(id, now() + ttlMs);
    return id;
  };

  // ---- CreateToken (POP RPC) ----

  const popError = (
    res: http.ServerResponse,
    record: TokenRequestRecord,
    status: number,
    code: string,
    message: string,
  ) => {
    record.status = status;
    record.code = code;
    res.writeHead(status, { 'content-type': 'application/json;charset=utf-8' });
    res.end(
      JSON.stringify({
        RequestId: randomUUID().toUpperCase(),
        HostId: 'nls-meta.cn-shanghai.aliyuncs.com',
        Code: code,
        Message: message,
        Recommend: `https://api.aliyun.com/troubleshoot?q=${code}&product=nls-cloud-meta`,
      }),
    );
  };

  const createToken = (req: http.IncomingMessage, res: http.ServerResponse, body: string) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const method = req.method ?? 'GET';
    const raw = method === 'POST' ? body : url.search.slice(1);
    const params = parsePairs(raw);
    const record: TokenRequestRecord = { method, params, status: 200 };
    tokenRequests.push(record);
    const fail = (status: number, code: string, message: string) =>
      popError(res, record, status, code, message);

    if (url.pathname !== '/') return fail(404, 'InvalidApi.NotFound', 'Specified api is not found.');
    if (method !== 'GET' && method !== 'POST')
      return fail(405, 'UnsupportedHTTPMethod', 'Method not allowed.');
    for (const name of [
      'AccessKeyId',
      'Action',
      'Format',
      'RegionId',
      'SignatureMethod',
      'SignatureNonce',
      'SignatureVersion',
      'Timestamp',
      'Version',
      'Signature',
    ]) {
      if (!params[name]) return fail(400, `Missing${name}`, `${name} is mandatory for this action.`);
    }
    if (params.Action !== 'CreateToken') {
      return fail(
        404,
        'InvalidAction.NotFound',
        'Specified api is not found, please check your url and method.',
      );
    }
    if (params.Version !== '2019-02-28')
      return fail(400, 'InvalidVersion', 'Specified parameter Version is not valid.');
    if (params.SignatureMethod !== 'HMAC-SHA1' || params.SignatureVersion !== '1.0') {
      return fail(400, 'InvalidSignatureMethod', 'Specified signature method or version is not supported.');
    }
    const secret = accessKeys[params.AccessKeyId as string];
    if (secret === undefined)
      return fail(404, 'InvalidAccessKeyId.NotFound', 'Specified access key is not found.');
    const timestamp = params.Timestamp as string;
    if (!/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/.test(timestamp) || Number.isNaN(Date.parse(timestamp))) {
      return fail(
        400,
        'InvalidTimeStamp.Format',
        'Specified time stamp or date value is not well formatted.',
      );
    }
    if (Math.abs(Date.parse(timestamp) - now()) > TIMESTAMP_WINDOW_MS) {
      return fail(400, 'InvalidTimeStamp.Expired', 'Specified time stamp or date value is expired.');
    }
    const toSign = popStringToSign(method, params);
    const expected = createHmac('sha1', `${secret}&`).update(toSign).digest('base64');
    if (params.Signature !== expected) {
      return fail(
        400,
        'SignatureDoesNotMatch',
        `Specified signature is not matched with our calculation. server string to sign is:${toSign}`,
      );
    }
    const nonce = params.SignatureNonce as string;
    if (usedNonces.has(nonce))
      return fail(400, 'SignatureNonceUsed', 'Specified signature nonce was used already.');
    usedNonces.add(nonce);

    const id = issueToken();
    record.token = id;
    res.writeHead(200, { 'content-type': 'application/json;charset=utf-8' });
    res.end(
      JSON.stringify({
        ErrMsg: '',
        Token: {
          UserId: '1234567890123456',
          Id: id,
          ExpireTime: Math.floor((tokens.get(id) as number) / 1000),
        },
        NlsRequestId: hex32(),
        RequestId: randomUUID().toUpperCase(),
      }),
    );
  };

  // ---- The gateway ----

  const wss = new WebSocketServer({ noServer: true });

  const serve = (ws: WebSocket, record: NlsSessionRecord) => {
    let taskId = '';
    let appkey = '';
    let start: NlsStartPayload | undefined;
    let startedAt = 0;
    let state: 'init' | 'started' | 'stopping' | 'done' = 'init';
    let lastDirective = '';
    let bytesPerMs = 16;
    // Sentence segmentation state.
    let pending = new Int16Array(0);
    let processedMs = 0;
    let index = 0;
    let sentence: Int16Array[] | null = null;
    let sentenceMs = 0;
    let beginTime = 0;
    let silenceMs = 0;
    let lastPartialMs = 0;

    const send = (
      name: string,
      payload?: Record<string, unknown>,
      status = 20000000,
      statusText?: string,
    ) => {
      const message: NlsMessage = {
        header: {
          namespace: name === 'TaskFailed' ? 'Default' : 'SpeechTranscriber',
          name,
          status,
          message_id: hex32(),
          task_id: taskId,
          status_text: statusText ?? 'Gateway:SUCCESS:Success.',
        },
        ...(payload ? { payload } : {}),
      };
      record.sent.push(message);
      if (ws.readyState === ws.OPEN) ws.send(JSON.stringify(message));
    };

    const fail = (status: number, statusText: string) => {
      if (state === 'done') return;
      state = 'done';
      record.failure = { status, statusText };
      clearTimeout(idle);
      send('TaskFailed', undefined, status, statusText);
      ws.close(1000);
    };

    let idle: NodeJS.Timeout | undefined;
    const armIdle = () => {
      clearTimeout(idle);
      idle = setTimeout(
        () =>
          fail(
            40000004,
            `Gateway:IDLE_TIMEOUT:Websocket session is idle for too long time, the last directive is '${lastDirective || 'None'}'!`,
          ),
        idleTimeoutMs,
      );
    };
    armIdle();

    const ask = (final: boolean): string | null => {
      const pcm = new Int16Array(sentence ? sentence.reduce((n, c) => n + c.length, 0) : 0);
      let at = 0;
      for (const chunk of sentence ?? []) {
        pcm.set(chunk, at);
        at += chunk.length;
      }
      const reply = hear({
        pcm,
        index,
        final,
        durationMs: sentenceMs,
        sessionMs: processedMs,
        start: start ?? {},
      });
      const answer = typeof reply === 'string' ? { text: reply } : reply;
      if (answer.fail) {
        fail(answer.fail.status, answer.fail.statusText);
        return null;
      }
      return answer.text ?? '';
    };

    const endSentence = () => {
      let text = ask(true);
      if (text === null) return;
      if (text && start?.enable_punctuation_prediction && !/[。？！，.?!,]$/.test(text)) text += '。';
      send('SentenceEnd', {
        index,
        time: processedMs,
        begin_time: beginTime,
        result: text,
        confidence: 1.0,
      });
      sentence = null;
    };

    const frame = (pcm: Int16Array) => {
      const speech = rms(pcm, 0, pcm.length) > energyThreshold;
      if (!sentence && speech) {
        index++;
        sentence = [];
        sentenceMs = 0;
        silenceMs = 0;
        lastPartialMs = 0;
        beginTime = processedMs;
        send('SentenceBegin', { index, time: processedMs });
      }
      processedMs += FRAME_MS;
      if (!sentence) return;
      sentence.push(pcm);
      sentenceMs += FRAME_MS;
      silenceMs = speech ? 0 : silenceMs + FRAME_MS;
      if (start?.enable_intermediate_result && sentenceMs - lastPartialMs >= partialEveryMs) {
        lastPartialMs = sentenceMs;
        const text = ask(false);
        if (text === null) return;
        if (text)
          send('TranscriptionResultChanged', { index, time: processedMs, result: text, confidence: 1.0 });
      }
      if (state === 'done') return;
      if (silenceMs >= (start?.max_sentence_silence ?? 800)) endSentence();
    };

    const audio = (data: Buffer) => {
      record.audioBytes += data.length;
      const leadMs = record.audioBytes / bytesPerMs - (performance.now() - startedAt);
      record.maxLeadMs = Math.max(record.maxLeadMs, leadMs);
      if (record.audioBytes / bytesPerMs > burstMs + (performance.now() - startedAt) * maxSpeedup) {
        return fail(40000000, 'Gateway:CLIENT_ERROR:Audio data is sent faster than real time!');
      }
      const samples = new Int16Array(data.length >> 1);
      for (let i = 0; i < samples.length; i++) samples[i] = data.readInt16LE(i * 2);
      const joined = new Int16Array(pending.length + samples.length);
      joined.set(pending);
      joined.set(samples, pending.length);
      const frameSamples = (bytesPerMs / 2) * FRAME_MS;
      let at = 0;
      for (; at + frameSamples <= joined.length && state !== 'done'; at += frameSamples) {
        frame(joined.slice(at, at + frameSamples));
      }
      pending = joined.slice(at);
    };

    const directive = (message: NlsMessage) => {
      const { header, payload } = message;
      lastDirective = header?.name ?? '';
      if (header?.namespace !== 'SpeechTranscriber') {
        return fail(40010001, `Gateway:NAMESPACE_NOT_FOUND:Namespace '${header?.namespace}' not found!`);
      }
      if (!HEX32.test(header.message_id ?? '') || !HEX32.test(header.task_id ?? '')) {
        return fail(40000003, 'Gateway:PARAMETER_INVALID:message_id and task_id must be 32 hex characters!');
      }
      if (header.name === 'StartTranscription') {
        if (state !== 'init')
          return fail(40000002, `Gateway:MESSAGE_INVALID:Can't process message in state '${state}'!`);
        taskId = header.task_id;
        appkey = header.appkey ?? '';
        if (!appkey) return fail(41000002, 'Gateway:APPKEY_KEY_IS_NULL:Appkey not set!');
        if (options.appKey !== undefined && appkey !== options.appKey) {
          return fail(40020105, 'Meta:APPKEY_NOT_EXIST:Appkey not exist!');
        }
        const expiry = tokens.get(record.token) as number;
        if (expiry <= now())
          return fail(40000001, `Gateway:ACCESS_DENIED:The token '${record.token}' has expired!`);
        start = (payload ?? {}) as NlsStartPayload;
        const rate = start.sample_rate ?? 16000;
        if (rate !== 8000 && rate !== 16000) return fail(41010101, 'UNSUPPORTED_SAMPLE_RATE');
        if ((start.format ?? 'pcm') !== 'pcm')
          return fail(40000003, `Gateway:PARAMETER_INVALID:format '${start.format}'!`);
        const silence = start.max_sentence_silence;
        if (silence !== undefined && (typeof silence !== 'number' || silence < 200 || silence > 6000)) {
          return fail(40000003, 'Gateway:PARAMETER_INVALID:max_sentence_silence must be in [200, 6000]!');
        }
        bytesPerMs = (rate / 1000) * 2;
        state = 'started';
        startedAt = performance.now();
        send('TranscriptionStarted', { session_id: hex32() });
        return;
      }
      if (header.task_id !== taskId) return fail(40000002, 'Gateway:MESSAGE_INVALID:task_id mismatch!');
      if (header.name === 'StopTranscription') {
        if (state === 'stopping') {
          return fail(40010005, 'Gateway:TASK_STATE_ERROR:Got stop directive while task is stopping!');
        }
        if (state !== 'started')
          return fail(40000002, `Gateway:MESSAGE_INVALID:Can't process message in state '${state}'!`);
        state = 'stopping';
        if (sentence) endSentence();
        if (record.failure) return;
        state = 'done';
        clearTimeout(idle);
        send('TranscriptionCompleted');
        return;
      }
      return fail(40010003, `Gateway:DIRECTIVE_INVALID:Unknown directive '${header.name}'!`);
    };

    ws.on('message', (data, isBinary) => {
      if (state === 'done') return;
      armIdle();
      const buffer = Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data as ArrayBuffer);
      if (isBinary) {
        if (state !== 'started') {
          return fail(40000002, `Gateway:MESSAGE_INVALID:Can't process binary data in state '${state}'!`);
        }
        return audio(buffer);
      }
      let message: NlsMessage;
      try {
        message = JSON.parse(buffer.toString('utf8')) as NlsMessage;
      } catch {
        return fail(40000002, 'Gateway:MESSAGE_INVALID:Invalid json message!');
      }
      record.received.push(message);
      directive(message);
    });
    ws.on('close', () => {
      clearTimeout(idle);
      record.clientLeftEarly = state !== 'done';
      state = 'done';
      record.closed = true;
      const closed = sessions.filter((s) => s.closed).length;
      for (const waiter of closeWaiters.splice(0)) {
        if (closed >= waiter.count) waiter.resolve();
        else closeWaiters.push(waiter);
      }
    });
  };

  const refuse = (socket: Duplex, status: number, reason: string) => {
    const body = JSON.stringify({ status, message: reason });
    socket.end(
      `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  };

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => createToken(req, res, Buffer.concat(chunks).toString('utf8')));
  });
  server.on('upgrade', (req: http.IncomingMessage, socket: Duplex, head: Buffer) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (url.pathname !== '/ws/v1') return refuse(socket, 404, 'Not Found');
    const header = req.headers['x-nls-token'];
    const fromHeader = typeof header === 'string' ? header : undefined;
    const token = fromHeader ?? url.searchParams.get('token') ?? '';
    if (!tokens.has(token)) return refuse(socket, 403, 'Forbidden');
    wss.handleUpgrade(req, socket, head, (ws) => {
      const record: NlsSessionRecord = {
        token,
        tokenVia: fromHeader ? 'header' : 'query',
        received: [],
        sent: [],
        audioBytes: 0,
        maxLeadMs: 0,
        closed: false,
        clientLeftEarly: false,
      };
      sessions.push(record);
      serve(ws, record);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    tokenUrl: `http://127.0.0.1:${port}/`,
    gatewayUrl: `ws://127.0.0.1:${port}/ws/v1`,
    tokenRequests,
    sessions,
    issueToken,
    revokeTokens() {
      tokens.clear();
    },
    tokenExpiresAt(token) {
      return tokens.get(token);
    },
    hear(fn) {
      hear = fn;
    },
    closedSessions(count) {
      if (sessions.filter((s) => s.closed).length >= count) return Promise.resolve();
      return new Promise<void>((resolve) => closeWaiters.push({ count, resolve }));
    },
    close() {
      for (const ws of wss.clients) ws.terminate();
      wss.close();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
