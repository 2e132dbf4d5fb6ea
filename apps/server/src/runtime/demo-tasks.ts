import type { TaskSettings } from '@callpilot/contracts';
import chineseDays from 'chinese-days';
import { and, eq, inArray, max } from 'drizzle-orm';
import type { Database } from '../db/client';
import { calls, callTasks, taskContacts } from '../db/schema';
import { placeCall, SIM_CALLER_NUMBER } from '../engine/call/run-call';
import { VirtualClock } from '../engine/clock';
import { chinaDate, chinaMidnight, DAY_MS } from '../engine/dialer/calendar';
import { Dialer } from '../engine/dialer/dialer';
import { Random } from '../engine/telephony/sim/random';
import { createSimCarrier } from '../engine/telephony/sim/sim-carrier';
import { createDialerStore } from '../modules/tasks/dialer-store';
import { DEMO_OUTBOUND_HOURS, demoAssistant, findDemoProject, knowledgeSettled } from './demo-calls';
import type { Runtime } from './runtime';

/** What the demo seeding needs of the runtime. */
type DemoRuntime = Pick<Runtime, 'engine' | 'seedingTasks' | 'calls'> & {
  log: { warn(obj: object, msg: string): void };
};

const SURNAMES = '王李张刘陈杨黄赵吴周徐孙马朱胡郭何林罗高';
const PREFIXES = ['138', '139', '136', '135', '150', '151', '158', '186', '187', '177', '189', '199'];

interface DemoTaskPlan {
  key: 'done' | 'paused' | 'draft';
  name: string;
  contacts: number;
  concurrency: number;
  /** Working days back from today (China time) the task started; none for the draft. */
  workdaysAgo?: number;
  /** The paused task stops once this share of its contacts is final. */
  pauseAt?: number;
}

export const DEMO_TASKS: DemoTaskPlan[] = [
  { key: 'done', name: '宽带升级回访（第一批）', contacts: 24, concurrency: 4, workdaysAgo: 5 },
  {
    key: 'paused',
    name: '宽带升级回访（第二批）',
    contacts: 40,
    concurrency: 3,
    workdaysAgo: 2,
    pauseAt: 0.5,
  },
  { key: 'draft', name: '新装用户满意度调查', contacts: 15, concurrency: 5 },
];

/** Deterministic per project, so an interrupted seeding resumes the same tasks. */
export const demoTaskId = (projectId: string, key: DemoTaskPlan['key']) => `demo-task-${key}-${projectId}`;

/** 09:00 China time on the working day `n` working days before `now`. */
function workdayMorning(now: number, n: number): number {
  let date = chinaDate(now);
  let left = n;
  while (left > 0) {
    date = chinaDate(chinaMidnight(date) - DAY_MS + 3600_000);
    if (chineseDays.isWorkday(date)) left--;
  }
  return chinaMidnight(date) + 9 * 3600_000;
}

function demoSettings(
  plan: DemoTaskPlan,
  assistantId: string,
  startAt: number | null,
  now: number,
): TaskSettings {
  const start = chinaDate(startAt ?? now);
  return {
    name: plan.name,
    assistantId,
    callerNumbers: [],
    startDate: start,
    endDate: chinaDate((startAt ?? now) + 30 * DAY_MS),
    // The same windows the demo's loose outbound calls keep to.
    windows: DEMO_OUTBOUND_HOURS.windows,
    skipHolidays: true,
    concurrency: plan.concurrency,
    retryRules: {
      no_answer: { maxRetries: 1, intervalMinutes: 60 },
      busy: { maxRetries: 1, intervalMinutes: 30 },
      powered_off: { maxRetries: 1, intervalMinutes: 120 },
      interrupted: { maxRetries: 1, intervalMinutes: 5 },
    },
    dailyCapPerNumber: 2,
  };
}

async function insertDemoTask(
  db: Database,
  projectId: string,
  plan: DemoTaskPlan,
  assistant: { id: string; name: string; version: number; variables: string[] },
  now: number,
): Promise<void> {
  const id = demoTaskId(projectId, plan.key);
  const startAt = plan.workdaysAgo === undefined ? null : workdayMorning(now, plan.workdaysAgo);
  const rng = new Random(`demo-task:${plan.key}`);
  await db.transaction(async (tx) => {
    await tx.insert(callTasks).values({
      id,
      projectId,
      name: plan.name,
      state: 'draft',
      assistantId: assistant.id,
      assistantName: assistant.name,
      settings: demoSettings(plan, assistant.id, startAt, now),
      createdAt: new Date((startAt ?? now) - 3600_000),
    });
    const phones = new Set<string>();
    while (phones.size < plan.contacts) {
      phones.add(`${rng.pick(PREFIXES)}${String(rng.int(0, 99_999_999)).padStart(8, '0')}`);
    }
    await tx.insert(taskContacts).values(
      [...phones].map((phone, i) => {
        const name = `${SURNAMES[rng.int(0, SURNAMES.length - 1)]}${rng.chance(0.5) ? '先生' : '女士'}`;
        const variables: Record<string, string> = {};
        for (const v of assistant.variables) {
          if (/姓名|称呼|客户/.test(v)) variables[v] = name;
          else if (/公司/.test(v)) variables[v] = '星河宽带';
          else if (/产品|套餐/.test(v)) variables[v] = '星河千兆宽带';
        }
        return {
          id: `${id}-c${String(i + 1).padStart(3, '0')}`,
          taskId: id,
          projectId,
          phone,
          name,
          variables,
          rowNumber: i + 1,
        };
      }),
    );
  });
}

/**
 * Runs a demo task with the real dialer and engine on the simulated carrier, on a simulated
 * clock set to when the task "happened". Resumes after the task's last call when a previous
 * seeding was interrupted.
 */
async function dialDemoTask(
  runtime: DemoRuntime,
  db: Database,
  projectId: string,
  plan: DemoTaskPlan,
  now: number,
): Promise<void> {
  const id = demoTaskId(projectId, plan.key);
  const [task] = await db.select().from(callTasks).where(eq(callTasks.id, id));
  if (!task?.assistantId) return;
  const [last] = await db
    .select({ at: max(calls.startedAt) })
    .from(calls)
    .where(eq(calls.taskId, id));
  const startAt = last?.at
    ? new Date(last.at).getTime() + 10 * 60_000
    : workdayMorning(now, plan.workdaysAgo ?? 0);
  if (task.state === 'draft') {
    await db
      .update(callTasks)
      .set({ state: 'running', startedAt: new Date(startAt), assistantVersion: task.assistantVersion ?? 1 })
      .where(eq(callTasks.id, id));
  }
  const { ports } = runtime.engine;
  const loaded = await ports.assistants.forCall(
    projectId,
    task.assistantId,
    task.assistantVersion ?? undefined,
  );
  const questions = await ports.knowledge.questions(loaded.config, 40);
  const clock = new VirtualClock({ startAt });
  const carrier = createSimCarrier({ clock, seed: `demo-task:${plan.key}`, questions });
  const deps = runtime.engine.callDeps({ clock, carrier });
  runtime.seedingTasks.add(id);
  const dialer = new Dialer({
    store: createDialerStore(db, { calls: runtime.calls }),
    clock,
    processId: `demo-seed-${id}`,
    ownsTask: (taskId) => taskId === id,
    recoverForeignLeasesAtStart: true,
    defaultCallerNumber: SIM_CALLER_NUMBER,
    maxIdleMs: 7 * DAY_MS,
    log: runtime.log,
    dial: (job) =>
      placeCall(
        deps,
        {
          projectId,
          assistantId: task.assistantId as string,
          version: loaded.version ?? undefined,
          callId: job.callId,
          callerNumber: job.callerNumber,
          calleeNumber: job.contact.phone,
          variables: job.contact.variables,
          taskId: id,
          taskName: task.name,
          contactId: job.contact.id,
          contactName: job.contact.name,
        },
        loaded,
      ),
  });
  const stopClock = clock.autoAdvance();
  dialer.start();
  try {
    // History must stay in the past: stop a run that would reach the present.
    const deadline = now - 3600_000;
    for (;;) {
      const [row] = await db.select({ state: callTasks.state }).from(callTasks).where(eq(callTasks.id, id));
      if (row?.state !== 'running' || clock.now() > deadline) break;
      if (plan.pauseAt !== undefined) {
        const open = await db
          .select({ id: taskContacts.id })
          .from(taskContacts)
          .where(
            and(eq(taskContacts.taskId, id), inArray(taskContacts.status, ['pending', 'retry', 'dialing'])),
          );
        if (open.length <= plan.contacts * (1 - plan.pauseAt)) {
          await db.update(callTasks).set({ state: 'paused' }).where(eq(callTasks.id, id));
          await dialer.idle();
          break;
        }
      }
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    await dialer.stop();
  } finally {
    stopClock();
    dialer.kill();
    await carrier.close();
    runtime.seedingTasks.delete(id);
  }
}

/**
 * The demo project's call tasks: one completed five working days ago, one paused halfway two
 * working days ago, one draft with contacts. The first two were dialled by the real dialer on
 * the simulated carrier. Idempotent: finished tasks are left alone, interrupted ones resumed.
 */
export async function ensureDemoTasks(
  runtime: DemoRuntime,
  db: Database,
  email: string,
  now = Date.now(),
): Promise<number> {
  const demo = await findDemoProject(db, email);
  if (!demo) return 0;
  const assistant = await demoAssistant(db, demo.projectId);
  if (!assistant?.version) return 0;
  const loaded = await runtime.engine.ports.assistants.forCall(
    demo.projectId,
    assistant.id,
    assistant.version,
  );
  await knowledgeSettled(db, demo.projectId);
  let touched = 0;
  for (const plan of DEMO_TASKS) {
    const id = demoTaskId(demo.projectId, plan.key);
    let [row] = await db.select({ state: callTasks.state }).from(callTasks).where(eq(callTasks.id, id));
    if (!row) {
      await insertDemoTask(
        db,
        demo.projectId,
        plan,
        {
          id: assistant.id,
          name: assistant.name,
          version: assistant.version,
          variables: loaded.config.variables.map((v) => v.name),
        },
        now,
      );
      if (plan.key !== 'draft') {
        await db.update(callTasks).set({ assistantVersion: assistant.version }).where(eq(callTasks.id, id));
      }
      row = { state: 'draft' };
      touched++;
    }
    if (plan.key === 'draft' || (row.state !== 'draft' && row.state !== 'running')) continue;
    await dialDemoTask(runtime, db, demo.projectId, plan, now);
    touched++;
  }
  return touched;
}
