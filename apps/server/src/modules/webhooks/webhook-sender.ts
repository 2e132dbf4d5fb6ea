import net from 'node:net';
import { performance } from 'node:perf_hooks';
import { WEBHOOK_TIMEOUT_MS } from '@callpilot/contracts';
import { type Agent, request } from 'undici';
import { guardedAgent, isPrivateAddress, type ResolveHost, urlHost } from '../../lib/outbound-http';

/** At most this much of a receiver's answer is kept in the attempt log. */
export const WEBHOOK_RESPONSE_CAP_BYTES = 4096;

export const WEBHOOK_PRIVATE_REFUSED =
  '接收地址为内网地址，已拒绝（运营方可设置 WEBHOOK_ALLOW_PRIVATE=true 允许）';
export const WEBHOOK_REDIRECT_REFUSED = '接收地址返回重定向，Webhook 不跟随重定向';

export interface WebhookSendResult {
  /** The receiver's status; null when no answer came (refused, timeout, connection failure). */
  statusCode: number | null;
  durationMs: number;
  /** Why the attempt failed, in Chinese for the delivery log; null for a 2xx. */
  error: string | null;
  responseBody: string | null;
}

export interface WebhookSender {
  send(url: string, headers: Record<string, string>, body: string): Promise<WebhookSendResult>;
  close(): Promise<void>;
}

/** Reads at most `cap` bytes of a body and drops the rest (the connection then closes). */
async function readCapped(body: AsyncIterable<Buffer> & { destroy(): void }, cap: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    const room = cap - size;
    chunks.push(chunk.length > room ? chunk.subarray(0, room) : chunk);
    size += Math.min(chunk.length, room);
    if (size >= cap) {
      body.destroy();
      break;
    }
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** The innermost cause's message: undici wraps connect errors (ours among them). */
function causeOf(err: unknown): { code?: string; message: string } {
  let current = err as { cause?: unknown; code?: string; message?: string } | undefined;
  while (current && typeof current === 'object' && current.cause) {
    current = current.cause as typeof current;
  }
  return { code: current?.code, message: current?.message ?? String(err) };
}

/**
 * POSTs webhook bodies: 15 s for the whole exchange, redirects never followed (a 3xx is a
 * failure), private addresses refused before sending for IP literals and at connect time for
 * names (undici's `connect.lookup`, see lib/outbound-http.ts), unless the operator allows them.
 */
export function createWebhookSender(
  options: { allowPrivate: boolean; resolve?: ResolveHost; timeoutMs?: number } = { allowPrivate: false },
): WebhookSender {
  const agent: Agent = guardedAgent({ allowPrivate: options.allowPrivate, resolve: options.resolve });
  const timeoutMs = options.timeoutMs ?? WEBHOOK_TIMEOUT_MS;

  return {
    async send(url, headers, body) {
      const started = performance.now();
      const done = (result: Omit<WebhookSendResult, 'durationMs'>): WebhookSendResult => ({
        ...result,
        durationMs: Math.round(performance.now() - started),
      });
      const fail = (error: string, statusCode: number | null = null, responseBody: string | null = null) =>
        done({ statusCode, error, responseBody });
      let target: URL;
      try {
        target = new URL(url);
      } catch {
        return fail('接收地址无效');
      }
      if (target.protocol !== 'http:' && target.protocol !== 'https:')
        return fail('接收地址须以 http:// 或 https:// 开头');
      const host = urlHost(target);
      // Literal addresses never reach the connect-time lookup: they are checked here.
      if (!options.allowPrivate && net.isIP(host) && isPrivateAddress(host))
        return fail(WEBHOOK_PRIVATE_REFUSED);
      const signal = AbortSignal.timeout(timeoutMs);
      try {
        const response = await request(target, {
          method: 'POST',
          headers,
          body,
          signal,
          dispatcher: agent,
          headersTimeout: timeoutMs,
          bodyTimeout: timeoutMs,
        });
        const text = await readCapped(response.body, WEBHOOK_RESPONSE_CAP_BYTES).catch(() => '');
        const status = response.statusCode;
        if (status >= 200 && status < 300)
          return done({ statusCode: status, error: null, responseBody: text });
        if (status >= 300 && status < 400) return fail(WEBHOOK_REDIRECT_REFUSED, status, text);
        return fail(`接收方返回 HTTP ${status}`, status, text);
      } catch (err) {
        if (signal.aborted) return fail(`接收地址 ${Math.round(timeoutMs / 1000)} 秒内未应答`);
        const cause = causeOf(err);
        if (cause.code === 'E_PRIVATE_ADDRESS') return fail(WEBHOOK_PRIVATE_REFUSED);
        if (cause.code === 'ENOTFOUND' || cause.code === 'EAI_AGAIN')
          return fail(`域名解析失败：${target.hostname}`);
        return fail(`连接失败：${cause.message}`);
      }
    },
    close: () => agent.close(),
  };
}
