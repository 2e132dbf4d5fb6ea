import os from 'node:os';
import type { TaskSettings } from '@callpilot/contracts';
import { eq, sql } from 'drizzle-orm';
import { type DatabaseHandle, openDatabase } from '../../apps/server/src/db/client';
import { callTasks } from '../../apps/server/src/db/schema';
import { insertContacts, insertTask, testSettings } from '../../apps/server/src/engine/dialer/test-support';
import { seedProject } from './dialer';
import { startPostgres } from './lib/pg';
import { withScope } from './lib/proc';
import { type BudgetResult, budget, fmtInt, fmtMs, fmtPct, fmtRatio, table } from './lib/report';
import { startServer } from './lib/server';

// 4,000 by default: a finite list ends with a drain (the last wave's longest calls, while freed
// slots have nothing left to dial) that no dialer can shorten. The run prints what it costs (a
// zero-overhead dialer on the same calls): 0.04× over 4,000 contacts, about twice that over 2,000.
const CONTACTS = Number(process.env.BENCH_DIALER_REAL_CONTACTS ?? 4000);
const CONCURRENCY = 200;
/** Simulated calls of ~30 s run in ~3 s of real time. */
const SCALE = Number(process.env.BENCH_DIALER_REAL_SCALE ?? 10);
const RATIO_BUDGET = 0.9;
const WALL_LIMIT_MS = 10 * 60_000;

const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : Number.NaN);
const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))] ?? Number.NaN;
};

export async function seedRealTask(
  handle: DatabaseHandle,
  contacts: number,
): Promise<{ projectId: string; taskId: string }> {
  const db = handle.db;
  const { projectId, loaded } = await seedProject(handle, 'bench-dialer-real');
  const settings: TaskSettings = testSettings({
    name: '真实路径压测',
    concurrency: CONCURRENCY,
    // No retries: each contact is one call, so contacts finished = calls and a second call of a
    // contact is a duplicate dial.
    retryRules: {},
    dailyCapPerNumber: 0,
  });
  // Paused while its contacts go in: the dialer must not start on a half-imported list.
  const taskId = await insertTask(db, projectId, settings, {
    assistantId: loaded.assistantId,
    state: 'paused',
  });
  await insertContacts(db, projectId, taskId, contacts);
  return { projectId, taskId };
}

interface CallRow {
  contactId: string;
  status: string;
  endReason: string | null;
  answered: boolean;
  analysed: boolean;
  turns: number;
  recording: string;
  /** Wall ms: the record's start is stamped by the call's scaled clock right after it is created. */
  startWall: number;
  /** Wall ms of the hang-up: start + simulated duration ÷ scale. */
  endWall: number;
  /** Wall ms the dialer released the contact (its lease): the slot is free for another call. */
  settledWall: number;
}

export async function dialerRealBenchmark(): Promise<BudgetResult[]> {
  return withScope(async (scope) => {
    const given = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL;
    const pg = given ? { url: given } : await startPostgres(scope);
    const server = await startServer(scope, {
      name: 'dialer-real',
      env: { DATABASE_URL: pg.url, SIM_TIME_SCALE: String(SCALE), DEMO: 'off' },
    });
    const handle = await openDatabase({ kind: 'postgres', url: pg.url, poolSize: 2 });
    scope.defer(() => handle.close());
    const { taskId } = await seedRealTask(handle, CONTACTS);
    const db = handle.db;

    const started = Date.now();
    await db.update(callTasks).set({ state: 'running' }).where(eq(callTasks.id, taskId));
    // Without an API call nothing wakes the dialer: its idle poll (≤ 5 s) sees the task; the run
    // is measured from the first call, so that poll is not counted against the dialer.
    let state = 'running';
    let finishedAt: Date | null = null;
    while (Date.now() - started < WALL_LIMIT_MS) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      const [row] = await db
        .select({ state: callTasks.state, finishedAt: callTasks.finishedAt })
        .from(callTasks)
        .where(eq(callTasks.id, taskId));
      state = row?.state ?? 'missing';
      finishedAt = row?.finishedAt ?? null;
      if (state !== 'running') break;
      if (server.child.hasExited())
        throw new Error(`the server exited during the run: ${server.child.output()}`);
    }
    const wallMs = Date.now() - started;

    // Recordings are mixed after the call by the server's worker (CPU-bound, on the same cores):
    // give it a little time, then count them queued or mixed; how many were mixed is reported.
    const mixUntil = Date.now() + 20_000;
    while (Date.now() < mixUntil) {
      const pending = (await db.execute(
        sql`select count(*)::int as n from calls where task_id = ${taskId} and recording = 'pending'`,
      )) as unknown as { rows: { n: number }[] };
      if ((pending.rows[0]?.n ?? 0) === 0) break;
      await new Promise((resolve) => setTimeout(resolve, 500));
    }

    const result = (await db.execute(sql`
      select c.contact_id, c.status, c.end_reason, c.answered_at is not null as answered,
             c.analysis_by is not null as analysed, c.turn_count, c.recording,
             extract(epoch from c.started_at) * 1000 as started_ms,
             extract(epoch from c.ended_at) * 1000 as ended_ms,
             extract(epoch from t.updated_at) * 1000 as settled_ms
      from calls c join task_contacts t on t.id = c.contact_id
      where c.task_id = ${taskId}`)) as unknown as { rows: Record<string, unknown>[] };
    const rows: CallRow[] = result.rows.map((r) => {
      const startWall = Number(r.started_ms);
      return {
        contactId: String(r.contact_id),
        status: String(r.status),
        endReason: (r.end_reason as string | null) ?? null,
        answered: Boolean(r.answered),
        analysed: Boolean(r.analysed),
        turns: Number(r.turn_count),
        recording: String(r.recording),
        startWall,
        endWall: startWall + (Number(r.ended_ms) - startWall) / SCALE,
        settledWall: Number(r.settled_ms),
      };
    });
    const contactRows = (await db.execute(sql`
      select status, count(*)::int as n, max(attempts)::int as max_attempts
      from task_contacts where task_id = ${taskId} group by status`)) as unknown as {
      rows: { status: string; n: number; max_attempts: number }[];
    };
    let finalContacts = 0;
    let openContacts = 0;
    let maxAttempts = 0;
    for (const c of contactRows.rows) {
      if (['done', 'failed', 'skipped'].includes(c.status)) finalContacts += c.n;
      else openContacts += c.n;
      maxAttempts = Math.max(maxAttempts, c.max_attempts);
    }
    const perContact = new Map<string, number>();
    for (const r of rows) perContact.set(r.contactId, (perContact.get(r.contactId) ?? 0) + 1);
    const duplicates = [...perContact.values()].reduce((a, n) => a + Math.max(0, n - 1), 0);
    const notEnded = rows.filter((r) => r.status !== 'ended').length;
    const answered = rows.filter((r) => r.answered);
    const unanalysed = rows.filter((r) => r.status === 'ended' && !r.analysed).length;
    // A call with turns must have its recording queued (pending) or mixed (ready).
    const withTurns = answered.filter((r) => r.turns > 0);
    const unrecorded = withTurns.filter((r) => r.recording !== 'ready' && r.recording !== 'pending').length;
    const mixed = withTurns.filter((r) => r.recording === 'ready').length;

    // Peak of calls live at once, from the wall spans.
    const edges = rows.flatMap((r) => [
      [r.startWall, 1],
      [r.endWall, -1],
    ]) as Array<[number, number]>;
    edges.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
    let liveNow = 0;
    let peak = 0;
    for (const [, d] of edges) {
      liveNow += d;
      peak = Math.max(peak, liveNow);
    }

    const durations = rows.map((r) => r.endWall - r.startWall);
    const meanCallMs = mean(durations);
    const firstStart = Math.min(...rows.map((r) => r.startWall));
    const lastStart = Math.max(...rows.map((r) => r.startWall));
    const completedAt = finishedAt?.getTime() ?? Number.NaN;
    const runMs = completedAt - firstStart;
    const theory = CONCURRENCY / meanCallMs; // calls per wall ms, every slot always in a call
    const achieved = finalContacts / runMs;
    const ratio = achieved / theory;
    // Before the last launch the list never ran dry: a slot not in a call was waiting on the system.
    let busy = 0;
    for (const r of rows) busy += Math.max(0, Math.min(r.endWall, lastStart) - r.startWall);
    const occupancy = busy / (CONCURRENCY * Math.max(1, lastStart - firstStart));
    // The k-th launch after the first wave takes the slot of the k-th release (hang-up order).
    const starts = rows.map((r) => r.startWall).sort((a, b) => a - b);
    const ends = rows.map((r) => r.endWall).sort((a, b) => a - b);
    const gaps: number[] = [];
    for (let k = 0; CONCURRENCY + k < starts.length; k++) {
      gaps.push((starts[CONCURRENCY + k] as number) - (ends[k] as number));
    }
    // Hang-up → contact released: the post-call work (end, analysis, recording queued, settle) on the slot.
    const afterCall = rows.map((r) => r.settledWall - r.endWall);
    const lastEnd = Math.max(...rows.map((r) => r.endWall));
    // The same calls, launched in the same order by a dialer with no overhead at all: each the
    // moment a slot frees. Its run over the baseline's is what the finite list costs any dialer.
    const slots = new Array<number>(CONCURRENCY).fill(0);
    for (const r of [...rows].sort((a, b) => a.startWall - b.startWall)) {
      let free = 0;
      for (let i = 1; i < slots.length; i++) if ((slots[i] as number) < (slots[free] as number)) free = i;
      slots[free] = (slots[free] as number) + (r.endWall - r.startWall);
    }
    const idealMs = Math.max(...slots);
    const [load1 = 0] = os.loadavg();

    console.log(
      `  built server on PostgreSQL, SIM_TIME_SCALE=${SCALE}, ${fmtInt(CONTACTS)} contacts at concurrency ` +
        `${CONCURRENCY}, simulated carrier (default persona mix), the outbound template's script brain, ` +
        'no retries; real placeCall: record, turns, analysis, recording mixed by the server',
    );
    console.log(
      table(
        ['calls per second (real time)', 'mean call', 'run', 'calls/s', 'ratio'],
        [
          [
            `baseline: ${CONCURRENCY} ÷ mean call (every slot always in a call)`,
            fmtMs(meanCallMs),
            '',
            (theory * 1000).toFixed(2),
            '1.00x',
          ],
          [
            'dialer, first call → task completed',
            '',
            fmtMs(runMs),
            (achieved * 1000).toFixed(2),
            fmtRatio(ratio),
          ],
        ],
      ),
    );
    console.log(
      `  slots in a call until the last launch ${fmtPct(occupancy)}; slot idle (hang-up → next launch) mean ` +
        `${fmtMs(mean(gaps))}, p50 ${fmtMs(pct(gaps, 50))}, p99 ${fmtMs(pct(gaps, 99))} over ${fmtInt(gaps.length)}; ` +
        `of it hang-up → contact released mean ${fmtMs(mean(afterCall))}, p99 ${fmtMs(pct(afterCall, 99))}; ` +
        `drain after the last launch ${fmtMs(completedAt - lastStart)} (calls still running until ` +
        `${fmtMs(lastEnd - lastStart)}, last hang-up → 已完成 ${fmtMs(completedAt - lastEnd)})`,
    );
    console.log(
      `  a dialer without any overhead, same calls in the same order: ${fmtMs(idealMs)}, ` +
        `${fmtRatio(finalContacts / idealMs / theory)} of the baseline (the list's own drain)`,
    );
    console.log(
      table(
        [
          'calls',
          'dup dials',
          'peak live',
          'open after',
          'not ended',
          'unanalysed',
          'answered',
          'no recording',
          'mixed 20 s after',
          'state',
          'wall',
        ],
        [
          [
            fmtInt(rows.length),
            fmtInt(duplicates),
            fmtInt(peak),
            fmtInt(openContacts),
            fmtInt(notEnded),
            fmtInt(unanalysed),
            fmtInt(answered.length),
            fmtInt(unrecorded),
            `${fmtInt(mixed)}/${fmtInt(withTurns.length)}`,
            state,
            fmtMs(wallMs),
          ],
        ],
      ),
    );
    console.log(`  load average ${load1.toFixed(2)} on ${os.availableParallelism()} cores at the end`);

    const complete =
      state === 'completed' && finalContacts === CONTACTS && rows.length === CONTACTS && notEnded === 0;
    return [
      budget(
        'dialer-real: every contact called once, every call ended, analysed and recorded, peak ≤ concurrency',
        complete &&
          duplicates === 0 &&
          maxAttempts <= 1 &&
          unanalysed === 0 &&
          unrecorded === 0 &&
          peak <= CONCURRENCY,
        `${fmtInt(rows.length)} calls for ${fmtInt(finalContacts)}/${fmtInt(CONTACTS)} final contacts, ` +
          `${fmtInt(duplicates)} duplicate(s), ${fmtInt(unanalysed)} unanalysed, ${fmtInt(unrecorded)} unrecorded, peak ${fmtInt(peak)}`,
      ),
      budget(
        `dialer-real: ${fmtInt(CONTACTS)} contacts through placeCall on PostgreSQL at ≥ ${RATIO_BUDGET} × ${CONCURRENCY} ÷ mean call duration`,
        complete && ratio >= RATIO_BUDGET,
        `${(achieved * 1000).toFixed(2)}/s vs ${(theory * 1000).toFixed(2)}/s (${fmtRatio(ratio)}), mean slot idle ` +
          `${fmtMs(mean(gaps))}, load ${load1.toFixed(2)}`,
      ),
    ];
  });
}
