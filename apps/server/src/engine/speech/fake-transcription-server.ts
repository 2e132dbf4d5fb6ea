import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { readWav } from './wav';

/**
 * Test support: a local HTTP server speaking OpenAI's `POST /v1/audio/transcriptions` the way a
 * strict provider does (multipart form, Bearer key, model, a WAV file it really decodes), so
 * the real `openai` client and everything built on it run with no network and no mock. What the
 * caller "said" is decided by a function of the decoded audio: SIP integration tests use it to
 * make an assistant hear speech on a real line.
 */

/** One request's audio as the server decoded it, with the form fields it came with. */
export interface HeardUtterance {
  /** 16-bit samples of the first channel. */
  pcm: Int16Array;
  sampleRate: number;
  channels: number;
  durationMs: number;
  model: string;
  language: string | undefined;
  prompt: string | undefined;
  responseFormat: string | undefined;
  fileName: string;
}

/** How to answer one request; a string is shorthand for `{ text }`. */
export type TranscriptionReply =
  | string
  | {
      text?: string;
      /** Answer with this status and an OpenAI-style error body. */
      status?: number;
      errorMessage?: string;
      /** Send this body as is (application/json), e.g. malformed JSON. */
      rawBody?: string;
      /** Never answer (until the server closes): for timeouts and aborts. */
      hang?: boolean;
    };

export type Hear = (
  utterance: HeardUtterance,
  index: number,
) => TranscriptionReply | Promise<TranscriptionReply>;

export interface TranscriptionRequest {
  path: string;
  headers: http.IncomingHttpHeaders;
  /** The form's text fields. */
  fields: Record<string, string>;
  /** Decoded audio; undefined when the request was refused before (no file, not a WAV...). */
  utterance?: HeardUtterance;
  /** The status the server answered or is about to answer. */
  status: number;
}

export interface FakeTranscriptionServer {
  /** `http://127.0.0.1:<port>/v1`: what a recognition profile's base URL would be. */
  baseUrl: string;
  requests: TranscriptionRequest[];
  /** Sets what every later request "said". */
  hear(fn: Hear): void;
  /** Resolves once the server has received `count` requests in all (already received ones count). */
  received(count: number): Promise<void>;
  close(): Promise<void>;
}

export interface FakeTranscriptionOptions {
  /** When set, requests must carry `Authorization: Bearer <apiKey>`; others get 401. */
  apiKey?: string;
  /** When set, any other model gets 404 as OpenAI answers an unknown model. */
  model?: string;
  /** What was said (default: nothing, an empty text). */
  hear?: Hear;
}

interface FormPart {
  name: string;
  fileName?: string;
  body: Buffer;
}

/** A multipart/form-data body's parts; null when it is not one (bad boundary, cut short). */
export function parseMultipart(body: Buffer, contentType: string | undefined): FormPart[] | null {
  const boundary = /boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(contentType ?? '');
  const marker = boundary?.[1] ?? boundary?.[2];
  if (!contentType?.toLowerCase().startsWith('multipart/form-data') || !marker) return null;
  const delimiter = Buffer.from(`--${marker}`);
  const parts: FormPart[] = [];
  let at = body.indexOf(delimiter);
  if (at < 0) return null;
  for (;;) {
    at += delimiter.length;
    if (body.subarray(at, at + 2).toString() === '--') return parts;
    if (body.subarray(at, at + 2).toString() !== '\r\n') return null;
    const headerEnd = body.indexOf('\r\n\r\n', at);
    const next = body.indexOf(Buffer.from(`\r\n--${marker}`), headerEnd);
    if (headerEnd < 0 || next < 0) return null;
    const headers = body.subarray(at + 2, headerEnd).toString('utf8');
    const disposition = /content-disposition:[^\r\n]*/i.exec(headers)?.[0] ?? '';
    const name = /\bname="([^"]*)"/.exec(disposition)?.[1];
    if (name === undefined) return null;
    const fileName = /\bfilename="([^"]*)"/.exec(disposition)?.[1];
    parts.push({
      name,
      ...(fileName !== undefined ? { fileName } : {}),
      body: body.subarray(headerEnd + 4, next),
    });
    at = next + 2;
  }
}

/** The audio of a WAV upload, or why a provider would refuse it. */
function decode(
  file: Buffer,
): { pcm: Int16Array; sampleRate: number; channels: number; durationMs: number } | string {
  let info: ReturnType<typeof readWav>;
  try {
    info = readWav(file);
  } catch (err) {
    return `Invalid file format: ${(err as Error).message}`;
  }
  if (info.bitsPerSample !== 16) return `Unsupported WAV: ${info.bitsPerSample}-bit samples`;
  const declared = file.readUInt32LE(info.dataOffset - 4);
  if (declared !== info.dataBytes || info.dataBytes % (2 * info.channels) !== 0) {
    return 'Invalid file format: WAV data chunk is truncated';
  }
  const frames = info.dataBytes / 2 / info.channels;
  const pcm = new Int16Array(frames);
  for (let i = 0; i < frames; i++) pcm[i] = file.readInt16LE(info.dataOffset + i * 2 * info.channels);
  return { pcm, sampleRate: info.sampleRate, channels: info.channels, durationMs: info.durationMs };
}

export async function startFakeTranscriptionServer(
  options: FakeTranscriptionOptions = {},
): Promise<FakeTranscriptionServer> {
  const requests: TranscriptionRequest[] = [];
  let hear: Hear = options.hear ?? (() => '');
  const waiters: { count: number; resolve: () => void }[] = [];
  const open = new Set<http.ServerResponse>();

  const sendError = (res: http.ServerResponse, status: number, message: string) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: { message, type: 'invalid_request_error', code: null } }));
  };

  const handle = async (req: http.IncomingMessage, res: http.ServerResponse) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    const request: TranscriptionRequest = { path, headers: req.headers, fields: {}, status: 200 };
    requests.push(request);
    for (const waiter of waiters.splice(0)) {
      if (requests.length >= waiter.count) waiter.resolve();
      else waiters.push(waiter);
    }
    const refuse = (status: number, message: string) => {
      request.status = status;
      sendError(res, status, message);
    };

    if (req.method !== 'POST' || path !== '/v1/audio/transcriptions') return refuse(404, `no route ${path}`);
    if (options.apiKey !== undefined && req.headers.authorization !== `Bearer ${options.apiKey}`) {
      return refuse(401, 'Incorrect API key provided.');
    }
    const parts = parseMultipart(Buffer.concat(chunks), req.headers['content-type']);
    if (!parts) return refuse(400, 'Expected a multipart/form-data body');
    for (const part of parts)
      if (part.fileName === undefined) request.fields[part.name] = part.body.toString('utf8');
    const file = parts.find((part) => part.name === 'file' && part.fileName !== undefined);
    const model = request.fields.model;
    if (!file) return refuse(400, "Missing required parameter: 'file'");
    if (!model) return refuse(400, "Missing required parameter: 'model'");
    if (options.model !== undefined && model !== options.model) {
      return refuse(404, `The model \`${model}\` does not exist or you do not have access to it.`);
    }
    const audio = decode(file.body);
    if (typeof audio === 'string') return refuse(400, audio);
    const utterance: HeardUtterance = {
      ...audio,
      model,
      language: request.fields.language,
      prompt: request.fields.prompt,
      responseFormat: request.fields.response_format,
      fileName: file.fileName ?? '',
    };
    request.utterance = utterance;

    const said = await hear(utterance, requests.indexOf(request));
    const reply = typeof said === 'string' ? { text: said } : said;
    if (reply.hang) return;
    if (reply.status) return refuse(reply.status, reply.errorMessage ?? `upstream error ${reply.status}`);
    if (reply.rawBody !== undefined) {
      res.writeHead(200, { 'content-type': 'application/json' });
      return res.end(reply.rawBody);
    }
    const text = reply.text ?? '';
    if (utterance.responseFormat === 'text') {
      res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' });
      return res.end(text);
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({ text, usage: { type: 'duration', seconds: Math.ceil(utterance.durationMs / 1000) } }),
    );
  };

  const server = http.createServer((req, res) => {
    open.add(res);
    res.on('close', () => open.delete(res));
    handle(req, res).catch((err: Error) => {
      if (!res.headersSent) sendError(res, 500, err.message);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    hear(fn) {
      hear = fn;
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
