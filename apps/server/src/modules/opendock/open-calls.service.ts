import type {
  CallFilters,
  OpenCallCreateRequest,
  OpenCallDetail,
  OpenCallList,
  OpenCallListQuery,
} from '@callpilot/contracts';
import { and, eq } from 'drizzle-orm';
import type { Database } from '../../db/client';
import { calls, projectNumbers } from '../../db/schema';
import { SIM_CALLER_NUMBER } from '../../engine/call/run-call';
import type { Env } from '../../env';
import { AppError, badRequest, conflict } from '../../lib/errors';
import { normalizePhone } from '../../lib/phone';
import type { AppSecret } from '../../lib/secret-box';
import type { ApiCallPayload } from '../../runtime/call-requests';
import { getAssistant, getPublishedVersion } from '../assistants/assistants.service';
import { beyond, callFilterWhere, callOrder, getCallDetail, toSummary } from '../calls/calls.service';
import { recordingUrl } from '../calls/recording-url';
import { isOnDoNotCall } from '../do-not-call/do-not-call.service';
import { getLimits } from '../projects/projects.service';
import { dialingContacts, liveCallsWithoutTask } from '../tasks/dialer-store';

const invalid = (message: string) => new AppError(400, 'VALIDATION_FAILED', message);

/** How long a caller refused for concurrency should wait before trying again (seconds). */
export const CONCURRENCY_RETRY_AFTER_SECONDS = 10;

/**
 * Checks a single call as the console and the dialer would check it, and resolves what the
 * engine needs: the published version, the normalised numbers, the assistant's variables.
 * Refusals name the field and the rule; nothing is written.
 */
export async function checkApiCall(
  db: Database,
  env: Pick<Env, 'TELEPHONY'>,
  projectId: string,
  request: OpenCallCreateRequest,
): Promise<ApiCallPayload> {
  const callee = normalizePhone(request.phone);
  if (!callee.ok) throw invalid(`字段 phone：${callee.reason}`);

  const published = await getPublishedVersion(db, projectId, request.assistantId, request.assistantVersion);
  if (!published) {
    // 404 for an assistant that is not this project's, then why it has no such version.
    const draft = await getAssistant(db, projectId, request.assistantId);
    if (draft.publishedVersion === null) throw badRequest('小助手尚未发布，请先在控制台发布后再发起呼叫');
    throw badRequest(`字段 assistantVersion：小助手版本 v${request.assistantVersion} 不存在`);
  }
  if (published.status === 'disabled') throw conflict('小助手已停用，请在控制台启用后再发起呼叫');

  // The variables the version defines; others are ignored, as a contact file's extra columns are.
  const variables: Record<string, string> = {};
  const missing: string[] = [];
  for (const variable of published.config.variables) {
    const value = request.variables[variable.name] ?? '';
    if (variable.required && value === '') missing.push(variable.name);
    if (value !== '') variables[variable.name] = value;
  }
  // Every missing one at once: a developer should not find them one request at a time.
  if (missing.length > 0) {
    throw invalid(missing.map((name) => `字段 variables.${name}：缺少必填变量“${name}”`).join('；'));
  }

  let callerNumber = SIM_CALLER_NUMBER;
  let onTrunk = false;
  if (request.callerNumber) {
    const [number] = await db
      .select({ trunkId: projectNumbers.trunkId })
      .from(projectNumbers)
      .where(
        and(
          eq(projectNumbers.projectId, projectId),
          eq(projectNumbers.number, request.callerNumber),
          eq(projectNumbers.enabled, true),
        ),
      )
      .limit(1);
    if (!number) throw badRequest(`外显号码 ${request.callerNumber} 不是本项目已启用的号码`);
    callerNumber = request.callerNumber;
    onTrunk = number.trunkId !== null;
  }
  if (request.simulatedPersona && onTrunk && env.TELEPHONY === 'sip') {
    throw invalid('字段 simulatedPersona：外显号码经 SIP 中继呼出真实电话，不能指定模拟客户');
  }

  if (await isOnDoNotCall(db, projectId, callee.phone)) throw conflict('号码在免打扰名单中');
  await assertCallSlot(db, projectId);

  return {
    assistantId: published.assistantId,
    version: published.version,
    callerNumber,
    calleeNumber: callee.phone,
    variables,
    ...(request.simulatedPersona ? { persona: request.simulatedPersona } : {}),
  };
}

/**
 * The project's balance and outbound concurrency, as a task's start and the dialer's claims
 * apply them: a metered project needs money left and a free slot among its calls in progress
 * (its tasks' and its single calls'). Without a lock spanning the engine's record write two
 * requests in the same instant can both pass; the dialer then waits for the slot.
 */
async function assertCallSlot(db: Database, projectId: string) {
  const limits = await getLimits(db, projectId);
  if (!limits.hasBalance) return;
  if (limits.balanceFen <= 0) throw new AppError(403, 'LIMIT_REACHED', '账户余额不足，无法发起呼叫');
  if (limits.concurrentCallout <= 0) {
    throw new AppError(403, 'LIMIT_REACHED', '项目未开通呼出并发，请联系销售');
  }
  const [tasks, single] = await Promise.all([
    dialingContacts(db, projectId),
    liveCallsWithoutTask(db, projectId),
  ]);
  if (tasks + single >= limits.concurrentCallout) {
    throw new AppError(
      429,
      'RATE_LIMITED',
      `项目的呼出并发已满（上限 ${limits.concurrentCallout} 路），请 ${CONCURRENCY_RETRY_AFTER_SECONDS} 秒后重试`,
    );
  }
}

/** The console's call detail, plus a signed recording address a program can fetch without the key. */
export async function getOpenCall(
  db: Database,
  secret: AppSecret,
  projectId: string,
  callId: string,
  origin: string,
): Promise<OpenCallDetail> {
  const detail = await getCallDetail(db, projectId, callId);
  if (detail.recording !== 'ready') return { ...detail, recordingUrl: null, recordingUrlExpiresAt: null };
  const signed = recordingUrl(secret, projectId, callId);
  return { ...detail, recordingUrl: `${origin}${signed.url}`, recordingUrlExpiresAt: signed.expiresAt };
}

type Cursor = { t: number; id: string; o: 'asc' | 'desc' };

const cursorInvalid = () => invalid('字段 cursor：游标无效，请使用上一页应答中的 nextCursor');

export const encodeCursor = (cursor: Cursor) => Buffer.from(JSON.stringify(cursor)).toString('base64url');

function decodeCursor(text: string, order: 'asc' | 'desc'): { value: Date; id: string } {
  let cursor: Partial<Cursor>;
  try {
    cursor = JSON.parse(Buffer.from(text, 'base64url').toString('utf8')) as Partial<Cursor>;
  } catch {
    throw cursorInvalid();
  }
  if (
    typeof cursor !== 'object' ||
    cursor === null ||
    typeof cursor.t !== 'number' ||
    !Number.isFinite(cursor.t) ||
    typeof cursor.id !== 'string' ||
    cursor.id.length > 64 ||
    (cursor.o !== 'asc' && cursor.o !== 'desc')
  ) {
    throw cursorInvalid();
  }
  if (cursor.o !== order) {
    throw invalid('字段 cursor：游标属于另一排序方向的查询，请去掉 cursor 从第一页重新开始');
  }
  return { value: new Date(cursor.t), id: cursor.id };
}

/**
 * The record list's filters with keyset pagination on (startedAt, id): each page starts strictly
 * after the previous page's last row, so calls added meanwhile neither repeat nor shift a row
 * out, and a deep page costs what the first does (no OFFSET).
 */
export async function listCallsByCursor(
  db: Database,
  projectId: string,
  query: OpenCallListQuery,
): Promise<OpenCallList> {
  const { limit, cursor, ...rest } = query;
  const filters: Partial<CallFilters> = { ...rest, sort: 'startedAt' };
  const where = callFilterWhere(projectId, filters);
  const after = cursor ? decodeCursor(cursor, query.order) : null;
  const rows = await db
    .select()
    .from(calls)
    .where(after ? and(where, beyond(filters, after, true)) : where)
    .orderBy(...callOrder(filters))
    .limit(limit + 1);
  const page = rows.slice(0, limit);
  const last = page.at(-1);
  return {
    items: page.map(toSummary),
    nextCursor:
      rows.length > limit && last
        ? encodeCursor({ t: last.startedAt.getTime(), id: last.id, o: query.order })
        : null,
  };
}
