import { createHash } from 'node:crypto';
import { IDEMPOTENCY_KEY_HOURS } from '@callpilot/contracts';
import { and, eq, isNull, lt, or } from 'drizzle-orm';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Database } from '../../../db/client';
import { idempotencyKeys } from '../../../db/schema';
import { AppError, badRequest } from '../../../lib/errors';

export const IDEMPOTENCY_HEADER = 'idempotency-key';
export const IDEMPOTENT_REPLAYED_HEADER = 'idempotent-replayed';

export const idempotencyMessages = {
  invalid: 'Idempotency-Key 须为 1 到 255 个可打印 ASCII 字符',
  mismatch: 'Idempotency-Key 已用于另一个请求内容不同的请求',
  inFlight: '相同 Idempotency-Key 的请求正在处理中，请稍后重试',
} as const;

const VALID_KEY = /^[\x20-\x7e]{1,255}$/;
const KEEP_MS = IDEMPOTENCY_KEY_HOURS * 3600_000;
/**
 * A first request still "in progress" after this long belongs to a process that died mid-request
 * (a live one answers or removes its row): a retry may then take the key over. Longer than any
 * open-API request runs (a 10,000-contact import takes seconds), so a slow first request is never
 * run twice.
 */
export const IDEMPOTENCY_ABANDONED_MS = 5 * 60_000;

/** What a stored answer holds: the exact bytes sent, so a replay is the same answer verbatim. */
interface StoredAnswer {
  body: string;
  contentType: string;
}

export interface IdempotentRequest {
  projectId: string;
  key: string;
  requestHash: string;
  /** This request holds the key's row and its answer is to be stored. */
  owner: boolean;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Set on an open-API POST that carries Idempotency-Key. */
    idempotency: IdempotentRequest | null;
  }
}

/**
 * Reads and checks the header and fingerprints the request (method, path with query, body), once
 * the body is parsed and before validation. A multipart upload is read by its handler, not here,
 * so it is fingerprinted by its type and length only.
 */
export function prepareIdempotency(req: FastifyRequest, projectId: string): IdempotentRequest | null {
  const header = req.headers[IDEMPOTENCY_HEADER];
  if (header === undefined) return null;
  if (typeof header !== 'string' || !VALID_KEY.test(header)) throw badRequest(idempotencyMessages.invalid);
  const hash = createHash('sha256').update(`${req.method} ${req.url}\n`);
  if (typeof req.isMultipart === 'function' && req.isMultipart()) {
    hash.update(`multipart ${req.headers['content-type'] ?? ''} ${req.headers['content-length'] ?? ''}`);
  } else if (typeof req.body === 'string' || Buffer.isBuffer(req.body)) {
    hash.update(req.body);
  } else if (req.body !== undefined) {
    hash.update(JSON.stringify(req.body));
  }
  return { projectId, key: header, requestHash: hash.digest('hex'), owner: false };
}

type Claim = { kind: 'owner' } | { kind: 'replay'; status: number; answer: StoredAnswer };

/**
 * Takes the key for this request, or says what to do instead. The row is the lock, so this holds
 * across processes: the first INSERT wins; a later request with the same key replays the stored
 * answer, or is refused while the first runs (409) or when it asks something else (422).
 */
export async function claimIdempotencyKey(
  db: Database,
  request: IdempotentRequest,
  now = new Date(),
): Promise<Claim> {
  const { projectId, key, requestHash } = request;
  const row = and(eq(idempotencyKeys.projectId, projectId), eq(idempotencyKeys.key, key));
  for (let attempt = 0; attempt < 2; attempt++) {
    const inserted = await db
      .insert(idempotencyKeys)
      .values({ projectId, key, requestHash, createdAt: now })
      .onConflictDoNothing()
      .returning({ key: idempotencyKeys.key });
    if (inserted.length > 0) return { kind: 'owner' };
    // A stored answer past its 24 hours, or a first request whose process died, frees the key.
    const taken = await db
      .update(idempotencyKeys)
      .set({ requestHash, status: null, response: null, createdAt: now })
      .where(
        and(
          row,
          or(
            lt(idempotencyKeys.createdAt, new Date(now.getTime() - KEEP_MS)),
            and(
              isNull(idempotencyKeys.status),
              lt(idempotencyKeys.createdAt, new Date(now.getTime() - IDEMPOTENCY_ABANDONED_MS)),
            ),
          ),
        ),
      )
      .returning({ key: idempotencyKeys.key });
    if (taken.length > 0) return { kind: 'owner' };
    const [stored] = await db.select().from(idempotencyKeys).where(row).limit(1);
    // Removed in between (the first request failed with a 5xx): try to take it once more.
    if (!stored) continue;
    if (stored.requestHash !== requestHash) throw new AppError(422, 'CONFLICT', idempotencyMessages.mismatch);
    if (stored.status === null) throw new AppError(409, 'CONFLICT', idempotencyMessages.inFlight);
    return { kind: 'replay', status: stored.status, answer: stored.response as StoredAnswer };
  }
  throw new AppError(409, 'CONFLICT', idempotencyMessages.inFlight);
}

/** Sends a stored answer again, exactly, marked as a replay. */
export function replayAnswer(reply: FastifyReply, status: number, answer: StoredAnswer): FastifyReply {
  return reply
    .code(status)
    .header(IDEMPOTENT_REPLAYED_HEADER, 'true')
    .header('content-type', answer.contentType)
    .send(answer.body);
}

/**
 * Stores the owner's answer for replays. A 5xx is not stored: the row goes, so the client's retry
 * runs the request again (the failure may have been ours and passing). A streamed answer cannot
 * be replayed and is not stored either.
 */
export async function settleIdempotencyKey(
  db: Database,
  request: IdempotentRequest,
  status: number,
  contentType: string,
  payload: unknown,
): Promise<void> {
  const row = and(eq(idempotencyKeys.projectId, request.projectId), eq(idempotencyKeys.key, request.key));
  const body =
    payload === null || payload === undefined
      ? ''
      : typeof payload === 'string'
        ? payload
        : Buffer.isBuffer(payload)
          ? payload.toString('utf8')
          : null;
  if (status >= 500 || body === null) {
    await db.delete(idempotencyKeys).where(row);
    return;
  }
  const answer: StoredAnswer = { body, contentType };
  await db.update(idempotencyKeys).set({ status, response: answer }).where(row);
}
