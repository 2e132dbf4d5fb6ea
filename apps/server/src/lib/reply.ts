import type { Envelope, ErrorCode, ErrorEnvelope } from '@callpilot/contracts';

export function ok<T>(data: T, status = 200): Envelope<T> {
  return { success: true, status, data, message: 'ok', msg: 'ok', error: null };
}

export function fail(status: number, code: ErrorCode, message: string): ErrorEnvelope {
  return { success: false, status, data: null, message, msg: message, error: message, code };
}
