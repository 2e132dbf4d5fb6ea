import { randomUUID } from 'node:crypto';
import {
  formatHostPort,
  type Paged,
  type PageQuery,
  parseHostPort,
  parseIpRange,
  type Trunk,
  type TrunkStatus,
  type trunkWriteRequest,
} from '@callpilot/contracts';
import { and, asc, count, eq, inArray, ne } from 'drizzle-orm';
import type { z } from 'zod';
import type { Database } from '../../db/client';
import { projectNumbers, sipTrunks } from '../../db/schema';
import { badRequest, conflict, notFound } from '../../lib/errors';
import { type AppSecret, encryptSecret } from '../../lib/secret-box';
import { type ProjectAccess, requireManager } from '../../plugins/project-access';
import type { TrunkControl } from '../../runtime/trunk-control';

type WriteInput = z.output<typeof trunkWriteRequest>;
export type TrunkRow = typeof sipTrunks.$inferSelect;

/** Enough for every carrier and PBX a project connects; more is a script gone wrong. */
export const MAX_TRUNKS_PER_PROJECT = 50;

const trunkNotFound = () => notFound('线路不存在');

/** Trunk credentials reach carriers' switches: only the project's owner and admins manage them. */
export function assertCanManageTrunks(project: ProjectAccess): void {
  requireManager(project, '仅项目所有者或管理员可以管理线路');
}

/**
 * SIP passwords are often short; two trailing characters are enough to tell which one is stored
 * without giving much of it away, and short ones get no hint at all.
 */
const hintFor = (password: string) => (password.length >= 8 ? password.slice(-2) : '');

const iso = (date: Date | null | undefined) => (date ? date.toISOString() : null);

/** A registration older than its expiry was not refreshed: the SIP process that held it is gone. */
function registrationExpired(row: TrunkRow, at: Date | null, now: number): boolean {
  return at !== null && now - at.getTime() > row.registerExpires * 1000;
}

/**
 * What a trunk is doing now: the SIP runtime's live view when this process has one, otherwise the
 * columns it last wrote. Without SIP on this server every trunk says so instead of guessing.
 */
export function trunkStatusOf(row: TrunkRow, control: TrunkControl, now: number): TrunkStatus {
  const none = {
    detail: null,
    registeredAt: null,
    optionsAt: null,
    optionsRttMs: null,
    optionsStatus: null,
    activeCalls: null,
  };
  if (control.unavailable) return { ...none, state: 'sip_off', detail: control.unavailable };
  if (!row.enabled) return { ...none, state: 'disabled' };
  const live = control.status(row.id);
  const registration = live
    ? live.registration
    : { state: row.regStatus, detail: row.regDetail, at: row.regAt };
  const options = live
    ? live.options
    : row.optionsAt
      ? { at: row.optionsAt, rttMs: row.optionsRttMs, status: row.optionsStatus ?? 408 }
      : null;
  const seen = {
    optionsAt: iso(options?.at),
    optionsRttMs: options?.rttMs ?? null,
    optionsStatus: options?.status ?? null,
    activeCalls: live?.activeCalls ?? null,
  };
  if (row.kind === 'register') {
    const state = registration?.state ?? 'unregistered';
    if (state === 'registered' && !live && registrationExpired(row, registration?.at ?? null, now)) {
      return {
        ...seen,
        state: 'unregistered',
        detail: '注册已过期，未见刷新（SIP 进程可能已停止）',
        registeredAt: null,
      };
    }
    return {
      ...seen,
      state,
      detail: state === 'failed' ? registration?.detail || '运营商未说明原因' : null,
      registeredAt: state === 'registered' ? iso(registration?.at) : null,
    };
  }
  if (!options) return { ...seen, state: 'unknown', detail: null, registeredAt: null };
  // Any answer but a timeout or a 5xx means the peer is there and speaking SIP.
  const down = options.status === 408 || options.status >= 500;
  return {
    ...seen,
    state: down ? 'unreachable' : 'reachable',
    detail: !down
      ? null
      : options.status === 408
        ? '对端无应答（OPTIONS 超时）'
        : `对端应答 ${options.status}（OPTIONS）`,
    registeredAt: null,
  };
}

function toDto(row: TrunkRow, numberCount: number, control: TrunkControl, now: number): Trunk {
  return {
    id: row.id,
    name: row.name,
    kind: row.kind,
    transport: row.transport,
    registrar: row.registrar,
    username: row.username,
    authUsername: row.authUsername,
    hasPassword: row.passwordEncrypted !== '',
    passwordHint: row.passwordHint,
    registerExpires: row.registerExpires,
    outboundProxy: row.outboundProxy,
    signallingAddress: row.signallingAddress,
    peerAddresses: row.peerAddresses,
    codecs: row.codecs,
    callerIdFormat: row.callerIdFormat,
    maxConcurrent: row.maxConcurrent,
    enabled: row.enabled,
    numberCount,
    status: trunkStatusOf(row, control, now),
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

export async function findTrunkRow(
  db: Database,
  projectId: string,
  trunkId: string,
): Promise<TrunkRow | undefined> {
  const [row] = await db
    .select()
    .from(sipTrunks)
    .where(and(eq(sipTrunks.projectId, projectId), eq(sipTrunks.id, trunkId)))
    .limit(1);
  return row;
}

async function numberCounts(db: Database, trunkIds: string[]): Promise<Map<string, number>> {
  if (trunkIds.length === 0) return new Map();
  const rows = await db
    .select({ trunkId: projectNumbers.trunkId, n: count() })
    .from(projectNumbers)
    .where(inArray(projectNumbers.trunkId, trunkIds))
    .groupBy(projectNumbers.trunkId);
  return new Map(rows.map((r) => [r.trunkId ?? '', r.n]));
}

async function withCount(db: Database, row: TrunkRow, control: TrunkControl, now: number) {
  const counts = await numberCounts(db, [row.id]);
  return toDto(row, counts.get(row.id) ?? 0, control, now);
}

export async function listTrunks(
  db: Database,
  control: TrunkControl,
  projectId: string,
  { page, pageSize }: PageQuery,
  now: number,
): Promise<Paged<Trunk>> {
  const where = eq(sipTrunks.projectId, projectId);
  const [rows, [total]] = await Promise.all([
    db
      .select()
      .from(sipTrunks)
      .where(where)
      .orderBy(asc(sipTrunks.createdAt), asc(sipTrunks.id))
      .limit(pageSize)
      .offset((page - 1) * pageSize),
    db.select({ n: count() }).from(sipTrunks).where(where),
  ]);
  const counts = await numberCounts(
    db,
    rows.map((r) => r.id),
  );
  return {
    items: rows.map((row) => toDto(row, counts.get(row.id) ?? 0, control, now)),
    total: total?.n ?? 0,
    page,
    pageSize,
  };
}

export async function getTrunk(
  db: Database,
  control: TrunkControl,
  projectId: string,
  trunkId: string,
  now: number,
): Promise<Trunk> {
  const row = await findTrunkRow(db, projectId, trunkId);
  if (!row) throw trunkNotFound();
  return withCount(db, row, control, now);
}

export async function getTrunkStatus(
  db: Database,
  control: TrunkControl,
  projectId: string,
  trunkId: string,
  now: number,
): Promise<TrunkStatus> {
  const row = await findTrunkRow(db, projectId, trunkId);
  if (!row) throw trunkNotFound();
  return trunkStatusOf(row, control, now);
}

async function assertNameFree(db: Database, projectId: string, name: string, exceptId?: string) {
  const [taken] = await db
    .select({ id: sipTrunks.id })
    .from(sipTrunks)
    .where(
      and(
        eq(sipTrunks.projectId, projectId),
        eq(sipTrunks.name, name),
        exceptId ? ne(sipTrunks.id, exceptId) : undefined,
      ),
    )
    .limit(1);
  if (taken) throw conflict(`已存在同名的线路「${name}」`);
}

/** The contracts checked the shapes; this stores one spelling of each address. */
function storedHostPort(value: string, label: string): string {
  if (value === '') return '';
  const parsed = parseHostPort(value, label);
  if (!parsed.ok) throw badRequest(parsed.reason);
  return formatHostPort(parsed.value);
}

function storedPeerAddresses(values: string[]): string[] {
  const out: string[] = [];
  for (const value of values) {
    const parsed = parseIpRange(value, '对端地址');
    if (!parsed.ok) throw badRequest(parsed.reason);
    if (!out.includes(parsed.value.text)) out.push(parsed.value.text);
  }
  return out;
}

/**
 * The columns a write sets. Fields of the other kind are cleared, so an IP trunk keeps no
 * credentials of its register past. A register trunk needs a password: a new one, or the one
 * already stored for it.
 */
function columnsFor(secret: AppSecret, input: WriteInput, current?: TrunkRow) {
  const register = input.kind === 'register';
  const password = input.password ?? '';
  let secretColumns: { passwordEncrypted: string; passwordHint: string } | undefined;
  if (!register) secretColumns = { passwordEncrypted: '', passwordHint: '' };
  else if (password) {
    secretColumns = { passwordEncrypted: encryptSecret(secret, password), passwordHint: hintFor(password) };
  } else if (!(current?.kind === 'register' && current.passwordEncrypted)) {
    throw badRequest('字段 password：注册线路须填写密码');
  }
  return {
    name: input.name,
    kind: input.kind,
    transport: input.transport,
    registrar: register ? storedHostPort(input.registrar, '注册服务器') : '',
    username: register ? input.username : '',
    // The same as the username is no different from empty: store empty, so it follows renames.
    authUsername: register && input.authUsername !== input.username ? input.authUsername : '',
    registerExpires: input.registerExpires,
    outboundProxy: register ? storedHostPort(input.outboundProxy, '出站代理') : '',
    signallingAddress: register ? '' : storedHostPort(input.signallingAddress, '信令地址'),
    peerAddresses: register ? [] : storedPeerAddresses(input.peerAddresses),
    codecs: input.codecs,
    callerIdFormat: input.callerIdFormat,
    maxConcurrent: input.maxConcurrent,
    enabled: input.enabled,
    ...secretColumns,
  };
}

/** Two requests racing past the name check: the unique index decides, with the same answer. */
function nameRaceOr(err: unknown, name: string): unknown {
  const code =
    (err as { code?: string; cause?: { code?: string } }).code ??
    (err as { cause?: { code?: string } }).cause?.code;
  return code === '23505' ? conflict(`已存在同名的线路「${name}」`) : err;
}

export async function createTrunk(
  db: Database,
  secret: AppSecret,
  control: TrunkControl,
  projectId: string,
  input: WriteInput,
  now: number,
): Promise<Trunk> {
  const [existing] = await db
    .select({ n: count() })
    .from(sipTrunks)
    .where(eq(sipTrunks.projectId, projectId));
  if ((existing?.n ?? 0) >= MAX_TRUNKS_PER_PROJECT) {
    throw conflict(`每个项目最多 ${MAX_TRUNKS_PER_PROJECT} 条线路，请先删除不用的线路`);
  }
  await assertNameFree(db, projectId, input.name);
  const columns = columnsFor(secret, input);
  const [row] = await db
    .insert(sipTrunks)
    .values({ id: randomUUID(), projectId, ...columns })
    .returning()
    .catch((err) => {
      throw nameRaceOr(err, input.name);
    });
  control.changed(row!.id);
  return toDto(row!, 0, control, now);
}

/** An omitted or empty password keeps the stored one: the console never has it to send back. */
export async function updateTrunk(
  db: Database,
  secret: AppSecret,
  control: TrunkControl,
  projectId: string,
  trunkId: string,
  input: WriteInput,
  now: number,
): Promise<Trunk> {
  const current = await findTrunkRow(db, projectId, trunkId);
  if (!current) throw trunkNotFound();
  await assertNameFree(db, projectId, input.name, trunkId);
  const columns = columnsFor(secret, input, current);
  const [row] = await db
    .update(sipTrunks)
    .set({ ...columns, updatedAt: new Date() })
    .where(and(eq(sipTrunks.projectId, projectId), eq(sipTrunks.id, trunkId)))
    .returning()
    .catch((err) => {
      throw nameRaceOr(err, input.name);
    });
  if (!row) throw trunkNotFound();
  control.changed(row.id);
  return withCount(db, row, control, now);
}

export async function setTrunkEnabled(
  db: Database,
  control: TrunkControl,
  projectId: string,
  trunkId: string,
  enabled: boolean,
  now: number,
): Promise<Trunk> {
  const [row] = await db
    .update(sipTrunks)
    .set({ enabled, updatedAt: new Date() })
    .where(and(eq(sipTrunks.projectId, projectId), eq(sipTrunks.id, trunkId)))
    .returning();
  if (!row) throw trunkNotFound();
  control.changed(row.id);
  return withCount(db, row, control, now);
}

/**
 * A trunk with numbers on it cannot go: their calls would have no way out. The numbers are named
 * so the user knows what to move first.
 */
export async function deleteTrunk(
  db: Database,
  control: TrunkControl,
  projectId: string,
  trunkId: string,
): Promise<void> {
  const row = await findTrunkRow(db, projectId, trunkId);
  if (!row) throw trunkNotFound();
  const inUse = async () => {
    const numbers = await db
      .select({ number: projectNumbers.number })
      .from(projectNumbers)
      .where(and(eq(projectNumbers.projectId, projectId), eq(projectNumbers.trunkId, trunkId)))
      .orderBy(asc(projectNumbers.number))
      .limit(4);
    if (numbers.length === 0) return null;
    const shown = numbers
      .slice(0, 3)
      .map((n) => n.number)
      .join('、');
    const more = numbers.length > 3 ? ' 等' : '';
    return conflict(
      `线路「${row.name}」仍有号码 ${shown}${more} 在使用，请先在号码管理中把这些号码改用其他线路或模拟线路后再删除`,
    );
  };
  const refusal = await inUse();
  if (refusal) throw refusal;
  try {
    await db.delete(sipTrunks).where(and(eq(sipTrunks.projectId, projectId), eq(sipTrunks.id, trunkId)));
  } catch (err) {
    // A number was put on the trunk meanwhile: the reference refused the delete.
    const code = (err as { code?: string }).code ?? (err as { cause?: { code?: string } }).cause?.code;
    if (code === '23503') throw (await inUse()) ?? conflict(`线路「${row.name}」仍有号码在使用，请稍后重试`);
    throw err;
  }
  control.changed(trunkId);
}
