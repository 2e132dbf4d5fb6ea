import { DEFAULT_WINDOWS } from '@callpilot/contracts';
import { and, asc, count, eq, isNotNull, isNull, like, notLike } from 'drizzle-orm';
import type { Database } from '../db/client';
import {
  assistants,
  calls,
  knowledgeDocuments,
  memberships,
  projectNumbers,
  projects,
  users,
} from '../db/schema';
import { answerCall } from '../engine/call/answer-call';
import { placeCall, SIM_CALLER_NUMBER } from '../engine/call/run-call';
import { VirtualClock } from '../engine/clock';
import { type CallingCalendar, chinaDayStart, inCallingWindow } from '../engine/dialer/calendar';
import { Random } from '../engine/telephony/sim/random';
import { createSimCarrier, type SimTransferFailure } from '../engine/telephony/sim/sim-carrier';
import { DEMO_PROJECT_NAME } from '../modules/demo/demo.service';
import { DEMO_AGENT_NUMBER, DEMO_FLOW_NUMBER } from '../modules/demo/demo-flow';
import type { Runtime } from './runtime';

export const DEMO_CALL_COUNT = 200;
export const DEMO_CALL_DAYS = 30;
const DAY_MS = 24 * 3600 * 1000;
const CHINA_OFFSET_MS = 8 * 3600 * 1000;

const SURNAMES = '王李张刘陈杨黄赵吴周徐孙马朱胡郭何林罗高';
const MOBILE_PREFIXES = ['138', '139', '136', '135', '150', '151', '158', '186', '187', '177', '189', '199'];

/** Deterministic per project and index, so an interrupted seeding resumes without duplicates. */
export const demoCallId = (projectId: string, index: number) =>
  `demo-${String(index).padStart(3, '0')}-${projectId}`;

/**
 * When the demo's outbound calls may start: the calling windows its tasks run in (demoSettings in
 * demo-tasks.ts), holidays skipped. History a real task could not have produced would teach a new
 * user that the product calls people at lunch or at night.
 */
export const DEMO_OUTBOUND_HOURS: CallingCalendar = {
  windows: DEFAULT_WINDOWS,
  skipHolidays: true,
  startDate: '2000-01-01',
  endDate: '2999-12-31',
};

/**
 * When customers call the service line: any day, 08:00–22:00 China time. The assistant answers
 * around the clock, but a history of customers calling at 3 a.m. would not look like a real one.
 */
export const DEMO_INBOUND_MINUTES = { start: 8 * 60, end: 22 * 60 } as const;

/** A moment in the last 30 days, in China time, never in the last hour: outbound inside the demo tasks' windows. */
function demoStart(rng: Random, now: number, inbound: boolean): number {
  for (;;) {
    const daysAgo = rng.int(0, DEMO_CALL_DAYS - 1);
    const day = chinaDayStart(now) - daysAgo * DAY_MS;
    const minute = inbound
      ? rng.int(DEMO_INBOUND_MINUTES.start, DEMO_INBOUND_MINUTES.end - 1)
      : rng.int(9 * 60, 20 * 60 - 1);
    const at = day + minute * 60_000 + rng.int(0, 59_999);
    if (at >= now - 3600_000) continue;
    if (inbound || inCallingWindow(DEMO_OUTBOUND_HOURS, at)) return at;
  }
}

function demoVariables(rng: Random, names: string[]): Record<string, string> {
  const values: Record<string, string> = {};
  for (const name of names) {
    if (/姓名|称呼|客户/.test(name)) {
      values[name] = `${SURNAMES[rng.int(0, SURNAMES.length - 1)]}${rng.chance(0.5) ? '先生' : '女士'}`;
    } else if (/公司/.test(name)) values[name] = '星河宽带';
    else if (/产品|套餐/.test(name)) values[name] = '星河千兆宽带';
  }
  return values;
}

/** The demo project's service line: a Shanghai landline its published assistant answers (呼入). */
export const DEMO_INBOUND_NUMBER = '02160881000';

/** Every fifth demo call is a customer calling in. */
const isInbound = (index: number) => index % 5 === 4;

/** The demo number exists and its calls reach the assistant (also for demos seeded before inbound calls). */
export async function ensureDemoNumber(db: Database, projectId: string, assistantId: string): Promise<void> {
  await db
    .insert(projectNumbers)
    .values({
      projectId,
      number: DEMO_INBOUND_NUMBER,
      label: '客服热线（演示）',
      inboundAssistantId: assistantId,
    })
    .onConflictDoNothing();
}

/**
 * The demo project's call history: calls over the last 30 days produced by the real engine on the
 * simulated carrier, outbound and inbound, each on its own simulated clock set to when it
 * "happened". Recordings are mixed afterwards by the runtime's recording worker.
 */
export async function seedDemoCalls(
  engine: Pick<Runtime['engine'], 'ports' | 'callDeps'>,
  db: Database,
  projectId: string,
  assistantId: string,
  options: { count?: number; now?: number; shouldStop?: () => boolean } = {},
): Promise<number> {
  const total = options.count ?? DEMO_CALL_COUNT;
  const now = options.now ?? Date.now();
  const assistant = await engine.ports.assistants.forCall(projectId, assistantId);
  const questions = await engine.ports.knowledge.questions(assistant.config, 40);
  const existing = new Set(
    (
      await db
        .select({ id: calls.id })
        .from(calls)
        .where(and(eq(calls.projectId, projectId), like(calls.id, 'demo-%')))
    ).map((r) => r.id),
  );
  let made = 0;
  for (let index = 0; index < total; index++) {
    const callId = demoCallId(projectId, index);
    if (existing.has(callId)) continue;
    if (options.shouldStop?.()) break;
    const rng = new Random(`demo:${index}`);
    const clock = new VirtualClock({ startAt: demoStart(rng, now, isInbound(index)) });
    const carrier = createSimCarrier({ clock, seed: `demo:${index}`, questions });
    const deps = engine.callDeps({ clock, carrier });
    const customer = `${rng.pick(MOBILE_PREFIXES)}${String(rng.int(0, 99_999_999)).padStart(8, '0')}`;
    const stop = clock.autoAdvance();
    try {
      if (isInbound(index)) {
        let answering: Promise<unknown> = Promise.resolve();
        carrier.onInbound((offer) => {
          answering = answerCall(deps, offer);
        });
        await clock.track(carrier.simulateInbound({ callId, from: customer, to: DEMO_INBOUND_NUMBER }));
        await answering;
      } else {
        await placeCall(
          deps,
          {
            projectId,
            assistantId,
            callId,
            callerNumber: SIM_CALLER_NUMBER,
            calleeNumber: customer,
            variables: demoVariables(
              rng,
              assistant.config.variables.map((v) => v.name),
            ),
          },
          assistant,
        );
      }
      made++;
    } finally {
      stop();
      await carrier.close();
    }
    // A fresh server answers requests while its history is produced.
    await new Promise((resolve) => setImmediate(resolve));
  }
  return made;
}

/** The demo project's first published assistant: it makes the demo's calls and answers its number. */
export async function demoAssistant(db: Database, projectId: string) {
  const [assistant] = await db
    .select({ id: assistants.id, name: assistants.name, version: assistants.publishedVersion })
    .from(assistants)
    .where(
      and(
        eq(assistants.projectId, projectId),
        isNotNull(assistants.publishedVersion),
        isNull(assistants.deletedAt),
      ),
    )
    .orderBy(asc(assistants.createdAt))
    .limit(1);
  return assistant ?? null;
}

/** The demo user's demo project and its published assistant, when they exist. */
export async function findDemoProject(db: Database, email: string) {
  const [row] = await db
    .select({ projectId: projects.id })
    .from(users)
    .innerJoin(memberships, and(eq(memberships.userId, users.id), eq(memberships.role, 'owner')))
    .innerJoin(projects, eq(projects.id, memberships.projectId))
    .where(and(eq(users.email, email.toLowerCase()), eq(projects.name, DEMO_PROJECT_NAME)))
    .limit(1);
  return row ?? null;
}

/** The demo's assistant calls (outbound and to the service line), the hotline's aside. */
export async function demoCallCount(db: Database, projectId: string): Promise<number> {
  const [row] = await db
    .select({ n: count() })
    .from(calls)
    .where(and(eq(calls.projectId, projectId), like(calls.id, 'demo-%'), notLike(calls.id, 'demo-flow-%')));
  return row?.n ?? 0;
}

/** Waits (up to `timeoutMs`) for the project's documents to be indexed, so demo callees get answers. */
export async function knowledgeSettled(db: Database, projectId: string, timeoutMs = 60_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    const pending = await db
      .select({ status: knowledgeDocuments.status })
      .from(knowledgeDocuments)
      .where(eq(knowledgeDocuments.projectId, projectId));
    if (pending.every((d) => d.status === 'ready' || d.status === 'failed')) return;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

export const DEMO_FLOW_CALL_COUNT = 30;

export const demoFlowCallId = (projectId: string, index: number) =>
  `demo-flow-${String(index).padStart(3, '0')}-${projectId}`;

/** What callers of the hotline do, in turn: each a script the simulated caller follows. */
const HOTLINE_CALLERS: { script: string[]; afterHours?: true; transfer?: SimTransferFailure }[] = [
  { script: ['1'] },
  { script: ['2', '我家宽带断网了，光猫的灯一直在闪', '好的，谢谢，再见'] },
  { script: ['0'] },
  { script: ['1'] },
  { script: ['0', '我想把套餐升级到千兆，麻烦回个电话'], transfer: 'busy' },
  { script: ['', '', ''] },
  { script: ['我家网络从晚上开始就断了，明天请联系我'], afterHours: true },
  { script: ['9', '8', '7'] },
  { script: ['挂机'] },
  { script: ['2', '我要转人工'], transfer: 'no_answer' },
];

/** The hotline's hours (营业时间 in demo-flow.ts), leaving the last quarter hour for the call. */
const HOTLINE_HOURS: CallingCalendar = {
  windows: [{ days: [1, 2, 3, 4, 5, 6], start: '08:00', end: '19:45' }],
  skipHolidays: true,
  startDate: '2000-01-01',
  endDate: '2999-12-31',
};

/** A moment in the last 30 days, in the hotline's hours or (afterHours) in an evening outside them. */
function hotlineStart(rng: Random, now: number, afterHours: boolean): number {
  for (;;) {
    const chinaMidnight = Math.floor((now + CHINA_OFFSET_MS) / DAY_MS) * DAY_MS - CHINA_OFFSET_MS;
    const day = chinaMidnight - rng.int(0, DEMO_CALL_DAYS - 1) * DAY_MS;
    const minute = afterHours ? rng.int(20 * 60 + 15, 22 * 60 + 30) : rng.int(8 * 60, 19 * 60 + 30);
    const at = day + minute * 60_000 + rng.int(0, 59_999);
    if (at < now - 3600_000 && inCallingWindow(HOTLINE_HOURS, at) !== afterHours) return at;
  }
}

/**
 * The hotline's history: callers of 星河宽带客服热线 over the last 30 days, each following a
 * script (bill lookups, repairs through the assistant, the human desk answering or not, no or
 * wrong keys, messages after hours), answered by the published flow through the real engine on
 * the simulated carrier, each on its own simulated clock.
 */
export async function seedDemoFlowCalls(
  engine: Pick<Runtime['engine'], 'callDeps'>,
  db: Database,
  projectId: string,
  options: { count?: number; now?: number; shouldStop?: () => boolean } = {},
): Promise<number> {
  const total = options.count ?? DEMO_FLOW_CALL_COUNT;
  const now = options.now ?? Date.now();
  // An owner who rebound or dropped the hotline keeps it that way: nothing to call then.
  const [hotline] = await db
    .select({ flowId: projectNumbers.inboundFlowId })
    .from(projectNumbers)
    .where(and(eq(projectNumbers.projectId, projectId), eq(projectNumbers.number, DEMO_FLOW_NUMBER)))
    .limit(1);
  if (!hotline?.flowId) return 0;
  const existing = new Set(
    (
      await db
        .select({ id: calls.id })
        .from(calls)
        .where(and(eq(calls.projectId, projectId), like(calls.id, 'demo-flow-%')))
    ).map((r) => r.id),
  );
  let made = 0;
  for (let index = 0; index < total; index++) {
    const callId = demoFlowCallId(projectId, index);
    if (existing.has(callId)) continue;
    if (options.shouldStop?.()) break;
    const caller = HOTLINE_CALLERS[index % HOTLINE_CALLERS.length]!;
    const rng = new Random(`demo-flow:${index}`);
    const clock = new VirtualClock({ startAt: hotlineStart(rng, now, caller.afterHours === true) });
    const carrier = createSimCarrier({
      clock,
      seed: `demo-flow:${index}`,
      transferFails: (number) => (number === DEMO_AGENT_NUMBER ? (caller.transfer ?? false) : true),
    });
    const deps = engine.callDeps({ clock, carrier });
    const customer = `${rng.pick(MOBILE_PREFIXES)}${String(rng.int(0, 99_999_999)).padStart(8, '0')}`;
    const stop = clock.autoAdvance();
    try {
      let answering: Promise<unknown> = Promise.resolve();
      carrier.onInbound((offer) => {
        answering = answerCall(deps, offer);
      });
      await clock.track(
        carrier.simulateInbound({ callId, from: customer, to: DEMO_FLOW_NUMBER, script: caller.script }),
      );
      await answering;
      made++;
    } finally {
      stop();
      await carrier.close();
    }
    await new Promise((resolve) => setImmediate(resolve));
  }
  return made;
}
