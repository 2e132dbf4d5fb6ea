/**
 * What the voice-cloning vendors' enrolment clients share: where a clone stands, how the vendor's
 * words become a Chinese ProviderError naming 语音配置, and a JSON POST that times out on the
 * engine's clock. The vendors themselves live in dashscope-voice-enrollment.ts and
 * volcengine-voice-clone.ts.
 */
import {
  ProviderError,
  type ProviderErrorKind,
  type ProviderService,
  providerTimeout,
} from '../brain/openai-client';
import { type Clock, clockDeadline } from '../clock';

/** Failures of enrolment read as the synthesis profile's: the same key, the same 语音配置. */
export const VOICE_CLONE_SERVICE: ProviderService = {
  id: 'speech_synthesis',
  name: '声音复刻服务',
  profile: '语音配置',
};

export const VOICE_CLONE_TIMEOUT_MS = 20_000;

/** Where a cloned voice stands at the vendor, vendor-neutral. */
export interface VendorCloneStatus {
  state: 'training' | 'ready' | 'failed';
  /** Why the vendor refused it, in Chinese; '' unless failed. */
  reason: string;
  /** The vendor's own status word or number, for logs and tests. */
  vendorStatus: string;
}

export const cloneFailure = (kind: ProviderErrorKind, message: string, status?: number) =>
  new ProviderError(kind, message, status, VOICE_CLONE_SERVICE.id);

/** Masks the secrets and anything key-shaped, and keeps a vendor's message to one short line. */
export function redactVendorText(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) if (secret) out = out.split(secret).join('***');
  out = out
    .replace(/\b(sk|ak|key)[-_][A-Za-z0-9_*-]{6,}/gi, '***')
    .replace(/\s+/g, ' ')
    .trim();
  return out.length > 120 ? `${out.slice(0, 120)}…` : out;
}

export interface JsonAnswer {
  status: number;
  body: unknown;
}

/**
 * POSTs JSON and reads the JSON answer, whatever its status; the caller maps statuses and bodies.
 * A connection that fails, or a body cut off mid-way, is a network error naming `vendor`; the
 * deadline runs on `clock`.
 */
export async function postJson(
  url: string,
  init: { headers: Record<string, string>; body: unknown },
  options: { clock: Clock; timeoutMs: number; signal?: AbortSignal; vendor: string },
): Promise<JsonAnswer> {
  const deadline = clockDeadline(options.clock, options.timeoutMs, options.signal);
  try {
    let res: Response;
    let text: string;
    try {
      res = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json', ...init.headers },
        body: JSON.stringify(init.body),
        signal: deadline.signal,
      });
      text = await res.text();
    } catch {
      if (deadline.timedOut()) throw providerTimeout(options.timeoutMs, VOICE_CLONE_SERVICE);
      if (options.signal?.aborted) throw options.signal.reason;
      throw cloneFailure(
        'network',
        `无法连接${options.vendor}，或连接中途断开，请检查${VOICE_CLONE_SERVICE.profile}中的接口地址与网络后重试`,
      );
    }
    let body: unknown;
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {
      body = undefined;
    }
    return { status: res.status, body };
  } finally {
    deadline.dispose();
  }
}
