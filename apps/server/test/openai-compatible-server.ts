import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A local HTTP server speaking the OpenAI chat-completions and embeddings protocol, so tests
 * drive the real `openai` client (and anything built on it) with no network and no mock of
 * the client itself. Replies are scripted; every request is recorded for assertions.
 */

export interface ScriptedToolCall {
  name: string;
  /** The JSON arguments as the model would emit them; streamed in several pieces. */
  arguments: string;
}

export interface ScriptedReply {
  content?: string;
  toolCalls?: ScriptedToolCall[];
  /** Answer with this HTTP status and an OpenAI-style error body instead of a completion. */
  status?: number;
  errorMessage?: string;
  /** Wait this long before answering (timeouts, aborts). */
  delayMs?: number;
  /** Characters per streamed content chunk (default 4). */
  chunkSize?: number;
}

export interface RecordedRequest {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  // biome-ignore lint/suspicious/noExplicitAny: the body is whatever the client sent; tests pick fields.
  body: any;
}

type ReplySource = ScriptedReply | ((request: RecordedRequest) => ScriptedReply);

export interface OpenAICompatibleServer {
  /** `http://127.0.0.1:<port>/v1`: what a provider profile's base URL would be. */
  baseUrl: string;
  requests: RecordedRequest[];
  /** Chat completion requests only, oldest first. */
  chatRequests(): RecordedRequest[];
  /** The reply for every chat request from now on (until changed). */
  replyWith(reply: ReplySource): void;
  /** Replies used once each, in order, before falling back to `replyWith`. */
  enqueue(...replies: ReplySource[]): void;
  /** Make /v1/embeddings fail with this status (null: answer normally). */
  failEmbeddings(status: number | null): void;
  close(): Promise<void>;
}

export const DEFAULT_EMBEDDING_DIMENSIONS = 64;

/**
 * A deterministic stand-in for an embedding model: a normalised bag of character bigrams hashed
 * into `dimensions` buckets, so texts sharing words get close vectors (useful for ranking tests).
 */
export function fakeEmbedding(text: string, dimensions = DEFAULT_EMBEDDING_DIMENSIONS): number[] {
  const vector = new Array<number>(dimensions).fill(0);
  const chars = [...text.replace(/\s+/g, '')];
  const grams = chars.length < 2 ? chars : chars.slice(1).map((c, i) => chars[i] + c);
  for (const gram of grams) {
    let hash = 2166136261;
    for (let i = 0; i < gram.length; i++) hash = Math.imul(hash ^ gram.charCodeAt(i), 16777619);
    const bucket = (hash >>> 0) % dimensions;
    vector[bucket] = (vector[bucket] ?? 0) + 1;
  }
  const norm = Math.hypot(...vector) || 1;
  return vector.map((v) => v / norm);
}

const readBody = (req: http.IncomingMessage) =>
  new Promise<string>((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => {
      clearTimeout(timer);
      resolve();
    });
  });

function piecesOf(text: string, size: number): string[] {
  const chars = [...text];
  const out: string[] = [];
  for (let i = 0; i < chars.length; i += size) out.push(chars.slice(i, i + size).join(''));
  return out;
}

/** Splits a tool call's arguments into three pieces, the way real providers stream them. */
function argumentPieces(args: string): string[] {
  if (args.length < 3) return [args];
  const a = Math.floor(args.length / 3);
  const b = Math.floor((2 * args.length) / 3);
  return [args.slice(0, a), args.slice(a, b), args.slice(b)];
}

export async function startOpenAICompatibleServer(
  options: {
    /** When set, requests must carry `Authorization: Bearer <apiKey>`; others get 401. */
    apiKey?: string;
    embeddingDimensions?: number;
  } = {},
): Promise<OpenAICompatibleServer> {
  const requests: RecordedRequest[] = [];
  const queue: ReplySource[] = [];
  let fallback: ReplySource = { content: '您好，我是测试模型。' };
  let embeddingFailure: number | null = null;
  const open = new Set<http.ServerResponse>();
  const closing = new AbortController();
  let sequence = 0;

  const sendError = (res: http.ServerResponse, status: number, message: string) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({
        error: {
          message,
          type: status === 401 ? 'invalid_request_error' : 'server_error',
          code: status === 401 ? 'invalid_api_key' : null,
        },
      }),
    );
  };

  const server = http.createServer(async (req, res) => {
    open.add(res);
    res.on('close', () => open.delete(res));
    const raw = await readBody(req);
    let body: unknown = null;
    try {
      body = raw ? JSON.parse(raw) : null;
    } catch {
      return sendError(res, 400, 'invalid JSON body');
    }
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    const recorded: RecordedRequest = { method: req.method ?? 'GET', path, headers: req.headers, body };
    requests.push(recorded);

    if (options.apiKey !== undefined && req.headers.authorization !== `Bearer ${options.apiKey}`) {
      return sendError(res, 401, 'Incorrect API key provided.');
    }

    if (req.method === 'POST' && path === '/v1/embeddings') {
      if (embeddingFailure !== null) return sendError(res, embeddingFailure, 'embeddings failed');
      const input = (body as { input: string | string[] }).input;
      const texts = Array.isArray(input) ? input : [input];
      const dimensions = options.embeddingDimensions ?? DEFAULT_EMBEDDING_DIMENSIONS;
      res.writeHead(200, { 'content-type': 'application/json' });
      return res.end(
        JSON.stringify({
          object: 'list',
          model: (body as { model: string }).model,
          data: texts.map((text, index) => ({
            object: 'embedding',
            index,
            embedding: fakeEmbedding(text, dimensions),
          })),
          usage: { prompt_tokens: texts.join('').length, total_tokens: texts.join('').length },
        }),
      );
    }

    if (req.method !== 'POST' || path !== '/v1/chat/completions') {
      return sendError(res, 404, `no route ${req.method} ${path}`);
    }

    const source = queue.shift() ?? fallback;
    const reply = typeof source === 'function' ? source(recorded) : source;
    if (reply.delayMs) await sleep(reply.delayMs, closing.signal);
    if (res.destroyed) return;
    if (reply.status)
      return sendError(res, reply.status, reply.errorMessage ?? `upstream error ${reply.status}`);

    const request = body as { model: string; stream?: boolean };
    const id = `chatcmpl-${++sequence}`;
    const created = Math.floor(Date.now() / 1000);
    const toolCalls = reply.toolCalls ?? [];
    const finishReason = toolCalls.length > 0 ? 'tool_calls' : 'stop';

    if (!request.stream) {
      res.writeHead(200, { 'content-type': 'application/json' });
      return res.end(
        JSON.stringify({
          id,
          object: 'chat.completion',
          created,
          model: request.model,
          choices: [
            {
              index: 0,
              finish_reason: finishReason,
              message: {
                role: 'assistant',
                content: reply.content ?? null,
                ...(toolCalls.length > 0
                  ? {
                      tool_calls: toolCalls.map((call, i) => ({
                        id: `call_${sequence}_${i}`,
                        type: 'function',
                        function: { name: call.name, arguments: call.arguments },
                      })),
                    }
                  : {}),
              },
            },
          ],
          usage: { prompt_tokens: 10, completion_tokens: 10, total_tokens: 20 },
        }),
      );
    }

    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    const chunk = (delta: object, finish: string | null = null) =>
      `data: ${JSON.stringify({
        id,
        object: 'chat.completion.chunk',
        created,
        model: request.model,
        choices: [{ index: 0, delta, finish_reason: finish }],
      })}\n\n`;
    res.write(chunk({ role: 'assistant', content: '' }));
    for (const piece of piecesOf(reply.content ?? '', reply.chunkSize ?? 4)) {
      res.write(chunk({ content: piece }));
    }
    toolCalls.forEach((call, index) => {
      res.write(
        chunk({
          tool_calls: [
            {
              index,
              id: `call_${sequence}_${index}`,
              type: 'function',
              function: { name: call.name, arguments: '' },
            },
          ],
        }),
      );
      for (const piece of argumentPieces(call.arguments)) {
        res.write(chunk({ tool_calls: [{ index, function: { arguments: piece } }] }));
      }
    });
    res.write(chunk({}, finishReason));
    res.end('data: [DONE]\n\n');
  });

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    chatRequests: () => requests.filter((r) => r.path === '/v1/chat/completions'),
    replyWith(reply) {
      fallback = reply;
    },
    enqueue(...replies) {
      queue.push(...replies);
    },
    failEmbeddings(status) {
      embeddingFailure = status;
    },
    close() {
      closing.abort();
      for (const res of open) res.destroy();
      return new Promise<void>((resolve, reject) => server.close((err) => (err ? reject(err) : resolve())));
    },
  };
}
