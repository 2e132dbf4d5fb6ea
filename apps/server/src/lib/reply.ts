import type { Readable } from 'node:stream';
import type { Envelope, ErrorCode, ErrorEnvelope } from '@callpilot/contracts';
import type { FastifyReply } from 'fastify';

export function ok<T>(data: T, status = 200): Envelope<T> {
  return { success: true, status, data, message: 'ok', msg: 'ok', error: null };
}

export function fail(status: number, code: ErrorCode, message: string): ErrorEnvelope {
  return { success: false, status, data: null, message, msg: message, error: message, code };
}

/** A file for the browser to save: a buffer, or a stream for exports too large to hold. */
export type DownloadFile = { fileName: string; contentType: string; body: Buffer | Readable };

/**
 * Answers with the file as an attachment. The plain filename is an ASCII stand-in for clients
 * that ignore filename* (RFC 6266), where the real, usually Chinese, name travels.
 */
export const sendDownload = (reply: FastifyReply, file: DownloadFile, asciiName: string) =>
  reply
    .header('content-type', file.contentType)
    .header(
      'content-disposition',
      `attachment; filename="${asciiName}"; filename*=UTF-8''${encodeURIComponent(file.fileName)}`,
    )
    .send(file.body);
