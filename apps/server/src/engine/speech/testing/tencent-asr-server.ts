import { createHmac, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import WebSocket, { WebSocketServer } from 'ws';

/**
 * Test support: a local server speaking Tencent Cloud's real-time ASR WebSocket protocol
 * (https://cloud.tencent.com/document/product/1093/48982) the way the real one behaves: it
 * checks the parameters and the HMAC-SHA1 URL signature over its own host and path, answers the
 * handshake with `{code: 0, message: "success", voice_id}` or a non-zero code and a close, holds
 * the client to the real-time rule (4000: more than 3 s of audio in a second) and the idle rule
 * (4008: no audio for 15 s), and streams slice_type 0/1/2 results and `final: 1` from a scripted
 * transcript. Nothing here reuses the client's signing code, so a shared mistake cannot pass.
 */

/** The audio a connection has received so far, handed to the script. */
export interface TencentHeard {
  pcm: Int16Array;
  durationMs: number;
  /** Which connection this is (0 for the first the server accepted). */
  connection: number;
}

/**
 * What the caller said, from the audio so far: one string for one sentence, an array for several
 * (earlier ones are then final). Called again as audio arrives, so text can grow as in a real stream.
 */
export type TencentHear = (heard: TencentHeard) => string | readonly string[];

export interface TencentFault {
  /** Fail once the connection has received this much audio. */
  afterAudioMs: number;
  code: number;
  message: string;
}

export interface TencentAsrServerOptions {
  appId: string;
  secretId: string;
  secretKey: string;
  hear?: TencentHear;
  /** 4008 after this long without audio (Tencent: 15 s). */
  idleTimeoutMs?: number;
  /** 4000 when more than `maxAudioMs` of audio arrives within any `windowMs` (Tencent: 3 s in 1 s). */
  rate?: { windowMs: number; maxAudioMs: number };
  /** A result is sent after every this much new audio (default 200 ms). */
  resultEveryMs?: number;
  /** Wall clock for the signature's timestamp check (default Date.now). */
  now?: () => number;
}

export interface TencentHotwordEntry {
  word: string;
  weight: number;
}

export interface TencentAsrConnection {
  index: number;
  /** Decoded query parameters, signature included. */
  params: Record<string, string>;
  /** The handshake's verdict: 0, or the error code it was refused with. */
  handshakeCode: number | null;
  hotwords: TencentHotwordEntry[];
  pcm: Int16Array;
  /** Size in bytes of every audio message, in order. */
  packets: number[];
  /** The most audio (ms) seen within one rate window. */
  peakWindowAudioMs: number;
  /** Every JSON message the server sent. */
  sent: Record<string, unknown>[];
  /** Non-zero codes the server answered with. */
  errors: { code: number; message: string }[];
  /** The client sent `{"type": "end"}`. */
  ended: boolean;
  /** Who closed first, once closed. */
  closedBy: 'client' | 'server' | null;
  /** Resolves when the socket is closed. */
  closed: Promise<void>;
  /** Resolves when the client sends the end message. */
  endReceived: Promise<void>;
}

export interface TencentAsrServer {
  /** `ws://127.0.0.1:<port>`: what the recogniser's `host` option takes. */
  url: string;
  connections: TencentAsrConnection[];
  hear(fn: TencentHear): void;
  /** Makes connections opened from now on fail mid-stream. */
  fault(fault: TencentFault | null): void;
  /** Connections opened from now on never answer the handshake, or never send the final result. */
  stall(stage: 'handshake' | 'final' | null): void;
  /** Resolves once `count` connections have been accepted in all. */
  connected(count: number): Promise<void>;
  close(): Promise<void>;
}

const ENGINES = new Set([
  '8k_zh',
  '8k_en',
  '8k_zh_large',
  '8k_zh_finance',
  '16k_zh',
  '16k_zh_large',
  '16k_zh_en',
  '16k_en',
  '16k_zh-PY',
  '16k_yue',
  '16k_zh_dialect',
]);
const VOICE_FORMATS = new Set(['1', '4', '6', '8', '10', '12', '14', '16']);
const NINETY_DAYS_S = 90 * 86_400;
const HAN = /\p{Script=Han}/gu;

/** hotword_list entries, or why Tencent would refuse the list. */
function parseHotwords(list: string): TencentHotwordEntry[] | string {
  const entries = list.split(',');
  if (entries.length > 128) return 'hotword_list 超过 128 个热词';
  const out: TencentHotwordEntry[] = [];
  for (const entry of entries) {
    const match = /^([^|\s]+)\|(\d+)$/.exec(entry);
    if (!match) return `hotword_list 格式错误: ${entry}`;
    const word = match[1] as string;
    const weight = Number(match[2]);
    if (word.length > 30 || (word.match(HAN)?.length ?? 0) > 10) return `热词过长: ${word}`;
    if (!((weight >= 1 && weight <= 11) || weight === 100)) return `热词权重不合法: ${entry}`;
    out.push({ word, weight });
  }
  return out;
}

const isInteger = (value: string | undefined) => value !== undefined && /^\d+$/.test(value);

export async function startTencentAsrServer(options: TencentAsrServerOptions): Promise<TencentAsrServer> {
  const idleTimeoutMs = options.idleTimeoutMs ?? 15_000;
  const rate = options.rate ?? { windowMs: 1000, maxAudioMs: 3000 };
  const resultEveryMs = options.resultEveryMs ?? 200;
  const now = options.now ?? Date.now;
  let hear: TencentHear = options.hear ?? (() => '');
  let fault: TencentFault | null = null;
  let stall: 'handshake' | 'final' | null = null;
  const connections: TencentAsrConnection[] = [];
  const waiters: { count: number; resolve: () => void }[] = [];

  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  await new Promise<void>((resolve) => wss.once('listening', () => resolve()));
  const { port } = wss.address() as AddressInfo;

  wss.on('connection', (ws: WebSocket, req: IncomingMessage) => {
    let markClosed = () => {};
    let markEnded = () => {};
    const connection: TencentAsrConnection = {
      index: connections.length,
      params: {},
      handshakeCode: null,
      hotwords: [],
      pcm: new Int16Array(0),
      packets: [],
      peakWindowAudioMs: 0,
      sent: [],
      errors: [],
      ended: false,
      closedBy: null,
      closed: new Promise<void>((resolve) => {
        markClosed = resolve;
      }),
      endReceived: new Promise<void>((resolve) => {
        markEnded = resolve;
      }),
    };
    connections.push(connection);
    for (const waiter of waiters.splice(0)) {
      if (connections.length >= waiter.count) waiter.resolve();
      else waiters.push(waiter);
    }
    const connectionFault = fault;
    const connectionStall = stall;

    const url = new URL(req.url ?? '/', `ws://${req.headers.host}`);
    for (const [key, value] of url.searchParams) connection.params[key] = value;
    const voiceId = connection.params.voice_id ?? '';
    let messageCount = 0;
    const send = (body: Record<string, unknown>) => {
      connection.sent.push(body);
      if (ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify(body));
    };
    const messageId = () => `${voiceId}_${messageCount++}_0`;

    let idleTimer: NodeJS.Timeout | undefined;
    const refuse = (code: number, message: string) => {
      clearTimeout(idleTimer);
      connection.errors.push({ code, message });
      send({ code, message, voice_id: voiceId, message_id: messageId() });
      if (!connection.closedBy) connection.closedBy = 'server';
      ws.close(1000);
    };
    ws.on('close', () => {
      clearTimeout(idleTimer);
      if (!connection.closedBy) connection.closedBy = 'client';
      markClosed();
    });

    const verdict = authenticate(url, req.headers.host ?? '', connection);
    connection.handshakeCode = verdict ? verdict.code : 0;
    if (verdict) return refuse(verdict.code, verdict.message);
    if (connectionStall === 'handshake') return;
    send({ code: 0, message: 'success', voice_id: voiceId });

    const armIdle = () => {
      clearTimeout(idleTimer);
      idleTimer = setTimeout(() => refuse(4008, '客户端超过15秒未发送音频数据'), idleTimeoutMs);
    };
    armIdle();

    const window: { at: number; ms: number }[] = [];
    const chunks: Buffer[] = [];
    let audioBytes = 0;
    let reportedAtMs = 0;
    /** Sentences as sent: `final` ones never change again. */
    const sentences: { text: string; final: boolean; startMs: number }[] = [];

    const audioMs = () => (audioBytes / 2 / 8000) * 1000;
    const heard = (): string[] => {
      const pcm = new Int16Array(audioBytes / 2);
      Buffer.concat(chunks).copy(Buffer.from(pcm.buffer));
      connection.pcm = pcm;
      const said = hear({ pcm, durationMs: audioMs(), connection: connection.index });
      return (typeof said === 'string' ? [said] : [...said]).filter((text) => text !== '');
    };
    const result = (index: number, sliceType: 0 | 1 | 2) => {
      const sentence = sentences[index] as (typeof sentences)[number];
      send({
        code: 0,
        message: 'success',
        voice_id: voiceId,
        message_id: messageId(),
        result: {
          slice_type: sliceType,
          index,
          start_time: Math.round(sentence.startMs),
          end_time: Math.round(audioMs()),
          voice_text_str: sentence.text,
          word_size: 0,
          word_list: [],
        },
      });
    };
    /** Brings the client up to date with what the script hears now; `last` closes every sentence. */
    const report = (last: boolean) => {
      const texts = heard();
      texts.forEach((text, index) => {
        const known = sentences[index];
        const closing = last || index < texts.length - 1;
        if (known?.final) return;
        if (!known) {
          sentences[index] = { text, final: false, startMs: audioMs() };
          result(index, 0);
        } else if (known.text !== text) {
          known.text = text;
          if (!closing) result(index, 1);
        }
        const sentence = sentences[index] as (typeof sentences)[number];
        if (closing) {
          sentence.final = true;
          result(index, 2);
        }
      });
    };

    ws.on('message', (data: Buffer, isBinary: boolean) => {
      if (connection.closedBy) return;
      if (!isBinary) {
        let body: { type?: unknown } | null = null;
        try {
          body = JSON.parse(data.toString()) as { type?: unknown };
        } catch {}
        if (body?.type !== 'end') return refuse(4010, '客户端上传未知文本消息');
        connection.ended = true;
        clearTimeout(idleTimer);
        markEnded();
        if (connectionStall === 'final') return;
        report(true);
        send({ code: 0, message: 'success', voice_id: voiceId, message_id: messageId(), final: 1 });
        connection.closedBy = 'server';
        ws.close(1000);
        return;
      }
      if (connection.ended) return refuse(4001, '结束识别后不能再发送音频');
      if (data.length % 2 !== 0) return refuse(4007, '音频解码失败，请检查上传音频数据格式与调用参数一致');
      armIdle();
      connection.packets.push(data.length);
      chunks.push(Buffer.from(data));
      audioBytes += data.length;

      const at = performance.now();
      window.push({ at, ms: (data.length / 2 / 8000) * 1000 });
      while (window.length && (window[0] as { at: number }).at <= at - rate.windowMs) window.shift();
      const inWindow = window.reduce((sum, packet) => sum + packet.ms, 0);
      connection.peakWindowAudioMs = Math.max(connection.peakWindowAudioMs, inWindow);
      if (inWindow > rate.maxAudioMs) {
        return refuse(
          4000,
          `音频数据发送过多，请${rate.windowMs / 1000}秒内最多发送${rate.maxAudioMs / 1000}秒音频数据`,
        );
      }
      if (connectionFault && audioMs() >= connectionFault.afterAudioMs) {
        return refuse(connectionFault.code, connectionFault.message);
      }
      if (audioMs() - reportedAtMs >= resultEveryMs) {
        reportedAtMs = audioMs();
        report(false);
      }
    });
  });

  /**
   * The handshake's checks: parameters (4001), then AppID, SecretId, signature and its validity
   * (4002). Tencent answers both after the upgrade, as a JSON message followed by a close.
   */
  function authenticate(
    url: URL,
    host: string,
    connection: TencentAsrConnection,
  ): { code: number; message: string } | null {
    const params = connection.params;
    const path = /^\/asr\/v2\/(\d+)$/.exec(url.pathname);
    if (!path) return { code: 4001, message: `请求地址不合法: ${url.pathname}` };
    for (const name of [
      'secretid',
      'timestamp',
      'expired',
      'nonce',
      'engine_model_type',
      'voice_id',
      'signature',
    ]) {
      if (!params[name]) return { code: 4001, message: `缺少参数 ${name}` };
    }
    const { timestamp, expired, nonce } = params;
    if (!isInteger(timestamp) || !isInteger(expired))
      return { code: 4001, message: 'timestamp/expired 不合法' };
    if (!isInteger(nonce) || Number(nonce) <= 0 || (nonce as string).length > 10) {
      return { code: 4001, message: 'nonce 应为不超过 10 位的正整数' };
    }
    if ((params.voice_id as string).length > 128) return { code: 4001, message: 'voice_id 过长' };
    if (!ENGINES.has(params.engine_model_type as string)) {
      return { code: 4001, message: `engine_model_type 不合法: ${params.engine_model_type}` };
    }
    if (params.voice_format !== undefined && !VOICE_FORMATS.has(params.voice_format)) {
      return { code: 4001, message: `voice_format 不合法: ${params.voice_format}` };
    }
    if (params.needvad !== undefined && !['0', '1'].includes(params.needvad)) {
      return { code: 4001, message: 'needvad 不合法' };
    }
    if (params.hotword_list !== undefined) {
      const hotwords = parseHotwords(params.hotword_list);
      if (typeof hotwords === 'string') return { code: 4001, message: hotwords };
      connection.hotwords = hotwords;
    }

    // Signature: every parameter but the signature, sorted, raw values, over host + path.
    const signed = Object.keys(params)
      .filter((key) => key !== 'signature')
      .sort()
      .map((key) => `${key}=${params[key]}`)
      .join('&');
    const expected = Buffer.from(
      createHmac('sha1', options.secretKey)
        .update(`${host}${url.pathname}?${signed}`, 'utf8')
        .digest('base64'),
    );
    const given = Buffer.from(params.signature as string);
    const refused = { code: 4002, message: '鉴权失败' };
    if (path[1] !== options.appId || params.secretid !== options.secretId) return refused;
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return refused;
    const nowS = Math.floor(now() / 1000);
    const ts = Number(timestamp);
    const until = Number(expired);
    if (until <= ts || until - ts >= NINETY_DAYS_S) return { code: 4002, message: '签名有效期不合法' };
    if (until < nowS || Math.abs(ts - nowS) > 3600) return { code: 4002, message: '签名已过期' };
    return null;
  }

  return {
    url: `ws://127.0.0.1:${port}`,
    connections,
    hear(fn) {
      hear = fn;
    },
    fault(next) {
      fault = next;
    },
    stall(stage) {
      stall = stage;
    },
    connected(count) {
      if (connections.length >= count) return Promise.resolve();
      return new Promise<void>((resolve) => waiters.push({ count, resolve }));
    },
    close() {
      for (const client of wss.clients) client.terminate();
      return new Promise<void>((resolve) => wss.close(() => resolve()));
    },
  };
}
