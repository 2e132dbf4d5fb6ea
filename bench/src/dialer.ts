// Issue #7 budget. `dialer`: the real Dialer (claims, leases, finishes: real database work on a
// fresh in-memory PGlite) on a virtual clock, 10,000 contacts at concurrency 200, each call the real
// simulated carrier + script-brain session: no contact dialled twice for one attempt, and contacts
// finished at no less than 95% of concurrency ÷ mean call duration (simulated time), both measured
// in the same run. The 10,000 calls skip the call-record writes (placeCall's ~20 queries a call
// would take ~5 min of PGlite); a shorter run through the real placeCall, with retries, cross-checks.
import { randomUUID } from 'node:crypto';
import os from 'node:os';
import {
  type AssistantConfig,
  assistantConfig,
  type EndReason,
  type RetryOutcome,
  type TaskSettings,
} from '@callpilot/contracts';
import { PGlite } from '@electric-sql/pglite';
import { eq, sql } from 'drizzle-orm';
import { type DatabaseHandle, openDatabase } from '../../apps/server/src/db/client';
import {
  assistants,
  assistantVersions,
  callTasks,
  projects,
  taskContacts,
} from '../../apps/server/src/db/schema';
import { createBrain } from '../../apps/server/src/engine/brain/create-brain';
import { fillConfig } from '../../apps/server/src/engine/call/fill-config';
import type { CallAssistant as LoadedAssistant } from '../../apps/server/src/engine/call/ports';
import { type CallDeps, placeCall, SIM_CALLER_NUMBER } from '../../apps/server/src/engine/call/run-call';
import { VirtualClock } from '../../apps/server/src/engine/clock';
import { Dialer } from '../../apps/server/src/engine/dialer/dialer';
import { maxAttemptsOf } from '../../apps/server/src/engine/dialer/policy';
import type { DialJob } from '../../apps/server/src/engine/dialer/ports';
import { insertContacts, insertTask, testSettings } from '../../apps/server/src/engine/dialer/test-support';
import { runCallSession } from '../../apps/server/src/engine/session/call-session';
import { createSimCarrier } from '../../apps/server/src/engine/telephony/sim/sim-carrier';
import { ASSISTANT_TEMPLATES } from '../../apps/server/src/modules/assistants/assistants.templates';
import { CallEventHub } from '../../apps/server/src/modules/calls/call-events';
import { CallRepository } from '../../apps/server/src/modules/calls/call-repository';
import { addToDoNotCall } from '../../apps/server/src/modules/do-not-call/do-not-call.service';
import { createDialerStore } from '../../apps/server/src/modules/tasks/dialer-store';
import { createCallPorts } from '../../apps/server/src/runtime/call-ports';
import { type BudgetResult, budget, fmtInt, fmtMs, fmtPct, fmtRatio, table } from './lib/report';

const CONTACTS = Number(process.env.BENCH_DIALER_CONTACTS ?? 10_000);
/** The cross-check through the full placeCall: ~25 ms of wall per call on PGlite, so a short run. */
const PLACE_CALL_CONTACTS = Number(process.env.BENCH_DIALER_PLACECALL_CONTACTS ?? 400);
/** Fixed, so contact ids, hence call ids, hence the carrier's seeded outcomes, are the same every run. */
const TASK_ID = '00000007-bench-4000-8000-dialer000000';
const CONCURRENCY = 200;
const WALL_LIMIT_MS = 10 * 60_000;
const RATIO_BUDGET = 0.95;
/** Monday 09:00 China time; the window covers every hour of every day anyway. */
const START_AT = Date.parse('2026-03-02T09:00:00+08:00');

const fmtS = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
const fmtRate = (perMs: number) => `${(perMs * 1000).toFixed(3)}/s`;

interface Run {
  label: string;
  contacts: number;
  wallMs: number;
  simulatedMs: number;
  /** Simulated ms from the task's start to its last call's launch (the pool never ran dry before). */
  launchPhaseMs: number;
  /** Call time inside the launch phase ÷ (concurrency × launch phase): 1 when no slot ever idled. */
  launchOccupancy: number;
  calls: number;
  durationsMs: number[];
  peakLive: number;
  dialerPeak: number;
  duplicates: number;
  overAttempts: number;
  retries: number;
  finalContacts: number;
  stillOpen: number;
  state: string;
  endReasons: Map<EndReason, number>;
  errors: unknown[];
  /** Simulated ms from a call's end to the launch of the call that took its slot. */
  reuseGapsMs: number[];
  /** Simulated ms from a retry's due time (previous end + interval) to its launch. */
  retryLatenciesMs: number[];
}

/** A project with the outbound template's assistant published as version 1. */
export async function seedProject(handle: DatabaseHandle, name = 'bench-dialer') {
  const db = handle.db;
  const projectId = randomUUID();
  await db.insert(projects).values({ id: projectId, name });
  const template = ASSISTANT_TEMPLATES.find((t) => t.use === 'outbound') ?? ASSISTANT_TEMPLATES[0];
  if (!template) throw new Error('no assistant template');
  const config: AssistantConfig = assistantConfig.parse(template.config);
  const assistantId = randomUUID();
  await db.insert(assistants).values({
    id: assistantId,
    projectId,
    name: template.name,
    use: 'outbound',
    config,
    templateKey: template.key,
    publishedVersion: 1,
  });
  await db.insert(assistantVersions).values({
    assistantId,
    version: 1,
    projectId,
    name: template.name,
    use: 'outbound',
    config,
    draftRevision: 1,
  });
  const loaded: LoadedAssistant = { assistantId, name: template.name, version: 1, config };
  return { projectId, loaded };
}

/**
 * 'placeCall': the server's own dial (call record written live, turns, analysis).
 * 'session': the same simulated carrier and script-brain session with no call-record writes (opt-outs
 * still reach the do-not-call list), so 10,000 calls fit the time budget on PGlite; the dialer's
 * claims, leases and finishes are real database work in both.
 */
type DialMode = 'placeCall' | 'session';

async function dialerRun(
  label: string,
  contacts: number,
  settings: TaskSettings,
  mode: DialMode,
): Promise<Run> {
  const client = await PGlite.create();
  // BENCH_DIALER_PROFILE=1: count and time every statement (time includes waiting for PGlite's one
  // connection), to see where the wall time goes.
  const profile = process.env.BENCH_DIALER_PROFILE ? new Map<string, { n: number; ms: number }>() : null;
  if (profile) {
    const wrap = (target: { query: PGlite['query'] }) => {
      const original = target.query.bind(target);
      target.query = (async (q: string, params?: unknown[], opts?: object) => {
        const t0 = performance.now();
        try {
          return await original(q, params, opts);
        } finally {
          const key = q.replace(/\s+/g, ' ').slice(0, 110);
          const e = profile.get(key) ?? { n: 0, ms: 0 };
          e.n++;
          e.ms += performance.now() - t0;
          profile.set(key, e);
        }
      }) as PGlite['query'];
    };
    wrap(client);
    const tx = client.transaction.bind(client);
    client.transaction = (async (
      fn: (t: Parameters<Parameters<PGlite['transaction']>[0]>[0]) => Promise<unknown>,
    ) =>
      tx(async (t) => {
        wrap(t);
        return fn(t);
      })) as PGlite['transaction'];
  }
  const handle = await openDatabase({ kind: 'pglite', client });
  const clock = new VirtualClock({ startAt: START_AT });
  const carrier = createSimCarrier({ clock, seed: 'bench-dialer' });
  const run: Run = {
    label,
    contacts,
    wallMs: 0,
    simulatedMs: 0,
    launchPhaseMs: 0,
    launchOccupancy: 0,
    calls: 0,
    durationsMs: [],
    peakLive: 0,
    dialerPeak: 0,
    duplicates: 0,
    overAttempts: 0,
    retries: 0,
    finalContacts: 0,
    stillOpen: 0,
    state: '',
    endReasons: new Map(),
    errors: [],
    reuseGapsMs: [],
    retryLatenciesMs: [],
  };
  let dialer: Dialer | undefined;
  let stopClock: (() => void) | undefined;
  try {
    await handle.migrate();
    const db = handle.db;
    const { projectId, loaded } = await seedProject(handle);
    const taskId = await insertTask(db, projectId, settings, {
      assistantId: loaded.assistantId,
      id: TASK_ID,
    });
    await insertContacts(db, projectId, taskId, contacts);
    const allowed = maxAttemptsOf(settings);
    const repository = new CallRepository(db, new CallEventHub(), { owner: 'bench', singleProcess: true });
    const deps: CallDeps = {
      ports: createCallPorts({
        db,
        repository,
        resolveProvider: async () => null,
        resolveRecognizer: async () => null,
        resolveSynthesizer: async () => null,
        embedderFor: async () => undefined,
        onError: (err) => run.errors.push(err),
      }),
      carrier,
      clock,
      onError: (err) => run.errors.push(err),
    };

    const seen = new Map<string, number>();
    const endTimes: number[] = []; // call ends whose slot was not yet reused, in order
    let reuseHead = 0;
    let live = 0;
    let lastLaunchAt = START_AT;
    const spans: Array<[number, number]> = [];
    const io = <T>(work: Promise<T>) => clock.track(work);
    const sessionCall = async (job: DialJob): Promise<{ callId: string; endReason: EndReason }> => {
      const config = fillConfig(loaded.config, job.contact.variables);
      const dialled = await carrier.originate({
        callId: job.callId,
        from: job.callerNumber,
        to: job.contact.phone,
        signal: job.signal,
      });
      if (!dialled.answered) return { callId: job.callId, endReason: dialled.outcome };
      const result = await runCallSession(
        { callId: job.callId, config, leg: dialled.leg, remoteNumber: job.contact.phone, signal: job.signal },
        {
          clock,
          brain: createBrain({ config, provider: null }),
          retrieve: async () => null,
          optOut: async (phone, reason) => {
            await io(addToDoNotCall(db, projectId, phone, 'opt_out', reason));
          },
        },
        // Turns are kept by the call record, which this mode does not write.
        { onTurn: () => {} },
      );
      if (result.error) run.errors.push(result.error);
      return { callId: job.callId, endReason: result.endReason };
    };
    const lastEnd = new Map<string, { at: number; reason: EndReason }>();
    let lastEndAt = START_AT;
    const dial = async (job: DialJob) => {
      const key = `${job.contact.id}#${job.attempt}`;
      const n = (seen.get(key) ?? 0) + 1;
      seen.set(key, n);
      if (n > 1) run.duplicates++;
      if (job.attempt > allowed) run.overAttempts++;
      if (job.attempt > 1) {
        run.retries++;
        const previous = lastEnd.get(job.contact.id);
        const rule = previous && settings.retryRules[previous.reason as RetryOutcome];
        if (previous && rule) {
          const due = previous.at + rule.intervalMinutes * 60_000;
          // With every slot busy a due retry waits for a call to end: count from that end, not from due.
          const ready = live >= CONCURRENCY - 1 ? Math.max(due, lastEndAt) : due;
          run.retryLatenciesMs.push(clock.now() - ready);
        }
      }
      run.calls++;
      const startedAt = clock.now();
      lastLaunchAt = startedAt;
      // Once every slot was used, each launch takes the slot of the earliest call end not yet reused.
      if (run.calls > CONCURRENCY && reuseHead < endTimes.length) {
        run.reuseGapsMs.push(startedAt - (endTimes[reuseHead++] as number));
      }
      live++;
      run.peakLive = Math.max(run.peakLive, live);
      let endedAt = startedAt;
      try {
        const result =
          mode === 'session'
            ? await sessionCall(job)
            : await placeCall(
                deps,
                {
                  projectId,
                  assistantId: loaded.assistantId,
                  version: 1,
                  callId: job.callId,
                  callerNumber: job.callerNumber,
                  calleeNumber: job.contact.phone,
                  variables: job.contact.variables,
                  taskId: job.task.id,
                  taskName: job.task.name,
                  contactId: job.contact.id,
                  contactName: job.contact.name,
                  signal: job.signal,
                },
                loaded,
              );
        endedAt = clock.now();
        lastEnd.set(job.contact.id, { at: endedAt, reason: result.endReason });
        run.endReasons.set(result.endReason, (run.endReasons.get(result.endReason) ?? 0) + 1);
        return result;
      } finally {
        live--;
        run.durationsMs.push(endedAt - startedAt);
        spans.push([startedAt, endedAt]);
        lastEndAt = endedAt;
        endTimes.push(endedAt);
      }
    };

    dialer = new Dialer({
      store: createDialerStore(db, { calls: repository }),
      clock,
      processId: `bench-${randomUUID()}`,
      dial,
      defaultCallerNumber: SIM_CALLER_NUMBER,
      recoverForeignLeasesAtStart: true,
      maxIdleMs: 7 * 24 * 3600_000,
      log: { warn: (obj, msg) => run.errors.push(new Error(`${msg} ${JSON.stringify(obj)}`)) },
    });
    const started = performance.now();
    stopClock = clock.autoAdvance();
    dialer.start();
    // Polls in memory (a database poll would compete with the dialer for PGlite); then reads the state.
    for (;;) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      // A stuck dialer shows as an incomplete run (state running, contacts open), not a hung bench.
      if (run.errors.length > 20 || performance.now() - started > WALL_LIMIT_MS) break;
      if (seen.size > 0 && dialer.liveCalls === 0) {
        const [row] = await db
          .select({ state: callTasks.state })
          .from(callTasks)
          .where(eq(callTasks.id, taskId));
        if (row?.state !== 'running') break;
      }
    }
    run.wallMs = performance.now() - started;
    run.dialerPeak = dialer.peakLive;
    const [task] = await db
      .select({ state: callTasks.state, finishedAt: callTasks.finishedAt })
      .from(callTasks)
      .where(eq(callTasks.id, taskId));
    run.state = task?.state ?? 'missing';
    run.simulatedMs = (task?.finishedAt?.getTime() ?? clock.now()) - START_AT;
    run.launchPhaseMs = lastLaunchAt - START_AT;
    let busy = 0;
    for (const [from, to] of spans) busy += Math.max(0, Math.min(to, lastLaunchAt) - from);
    run.launchOccupancy = busy / (CONCURRENCY * Math.max(1, run.launchPhaseMs));
    const counts = await db
      .select({ status: taskContacts.status, n: sql<number>`count(*)::int` })
      .from(taskContacts)
      .where(eq(taskContacts.taskId, taskId))
      .groupBy(taskContacts.status);
    for (const c of counts) {
      if (['done', 'failed', 'skipped'].includes(c.status)) run.finalContacts += c.n;
      else run.stillOpen += c.n;
    }
  } finally {
    if (profile) {
      for (const [q, e] of [...profile].sort((a, b) => b[1].ms - a[1].ms).slice(0, 30)) {
        console.log(`${String(e.n).padStart(7)} ${e.ms.toFixed(0).padStart(7)} ms  ${q}`);
      }
    }
    dialer?.kill();
    stopClock?.();
    await carrier.close();
    await handle.close();
  }
  return run;
}

const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : Number.NaN);
const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))] ?? Number.NaN;
};

export async function dialerBenchmark(): Promise<BudgetResult[]> {
  const settings = testSettings({
    name: '压测任务',
    concurrency: CONCURRENCY,
    // No retries: every contact reaches a final state on its first call, so "processed" is exact.
    retryRules: {},
    dailyCapPerNumber: 0,
  });
  const runs: Run[] = [];
  const main = await dialerRun(`${fmtInt(CONTACTS)} contacts, session dial`, CONTACTS, settings, 'session');
  runs.push(main);
  if (PLACE_CALL_CONTACTS > 0) {
    // The retry path too: 1-minute intervals, so retries become due while the first calls still run.
    const retrying = testSettings({
      ...settings,
      retryRules: {
        no_answer: { maxRetries: 2, intervalMinutes: 1 },
        busy: { maxRetries: 2, intervalMinutes: 1 },
        powered_off: { maxRetries: 1, intervalMinutes: 1 },
        rejected: { maxRetries: 1, intervalMinutes: 1 },
      },
    });
    runs.push(
      await dialerRun(
        `${fmtInt(PLACE_CALL_CONTACTS)} contacts, real placeCall, retries`,
        PLACE_CALL_CONTACTS,
        retrying,
        'placeCall',
      ),
    );
  }
  const [load1 = 0] = os.loadavg();

  console.log(
    '  real Dialer (claims, leases, finishes on a fresh in-memory PGlite, default tickMs 1000) on a virtual ' +
      'clock, simulated carrier (default persona mix) + script-brain session per call; window all days ' +
      '00:00-24:00, no daily cap. "session dial": no call-record writes (10,000 real placeCalls take ~5 min ' +
      'of PGlite), no retries, so contacts = calls; "real placeCall": the server\'s own dial, as a ' +
      'cross-check, with retries after 1 min (its ratio counts calls, and a short run is mostly ramp and drain).',
  );
  const figures = runs.map((r) => {
    const meanMs = mean(r.durationsMs);
    const theoretical = CONCURRENCY / meanMs; // contacts per simulated ms
    const throughput = r.finalContacts / r.simulatedMs;
    // Without retries calls = contacts; with them each call, not each contact, takes a slot.
    const callRate = r.calls / r.simulatedMs;
    return {
      r,
      meanMs,
      theoretical,
      throughput,
      callRate,
      ratio: throughput / theoretical,
      slotRatio: callRate / theoretical,
    };
  });
  console.log(
    table(
      [
        'rate (simulated time)',
        'mean call',
        'simulated',
        'contacts/s',
        'ratio',
        'calls/s',
        'calls ratio',
        'steady occupancy',
      ],
      figures.flatMap(({ r, meanMs, theoretical, throughput, ratio, callRate, slotRatio }) => [
        [
          `baseline: ${CONCURRENCY} ÷ mean call (${r.label})`,
          fmtS(meanMs),
          '',
          fmtRate(theoretical),
          '1.00x',
          fmtRate(theoretical),
          '1.00x',
          '',
        ],
        [
          `dialer, start → completed (${r.label})`,
          '',
          fmtS(r.simulatedMs),
          fmtRate(throughput),
          fmtRatio(ratio),
          fmtRate(callRate),
          fmtRatio(slotRatio),
          fmtPct(r.launchOccupancy),
        ],
      ]),
    ),
  );
  console.log(
    table(
      [
        'run',
        'calls',
        'dup dials',
        'attempts > allowed',
        'retries',
        'peak live',
        'open after',
        'state',
        'wall',
      ],
      runs.map((r) => [
        r.label,
        fmtInt(r.calls),
        fmtInt(r.duplicates),
        fmtInt(r.overAttempts),
        fmtInt(r.retries),
        `${fmtInt(r.peakLive)} (dialer ${fmtInt(r.dialerPeak)})`,
        fmtInt(r.stillOpen),
        r.state,
        fmtMs(r.wallMs),
      ]),
    ),
  );
  for (const { r, meanMs } of figures) {
    const idleSlotMs = CONCURRENCY * r.simulatedMs - r.durationsMs.reduce((a, b) => a + b, 0);
    console.log(
      `  ${r.label}: call (dial → end, incl. ring) mean ${fmtS(meanMs)}, p50 ${fmtS(pct(r.durationsMs, 50))}, ` +
        `max ${fmtS(pct(r.durationsMs, 100))}; slot reuse (call end → next launch) mean ` +
        `${fmtMs(mean(r.reuseGapsMs))}, max ${fmtMs(pct(r.reuseGapsMs, 100))} over ${fmtInt(r.reuseGapsMs.length)}; ` +
        `idle slot time ${fmtPct(idleSlotMs / (CONCURRENCY * r.simulatedMs))}, of which the drain after the last ` +
        `launch lasts ${fmtS(r.simulatedMs - r.launchPhaseMs)}`,
    );
    if (r.retryLatenciesMs.length > 0) {
      // Gaps above are also waits for retries not yet due; this is how late a due retry was dialled
      // once a slot was free for it.
      console.log(
        `    retry due (and a slot free) → dialled: mean ${fmtMs(mean(r.retryLatenciesMs))}, p99 ${fmtMs(pct(r.retryLatenciesMs, 99))}, ` +
          `max ${fmtMs(pct(r.retryLatenciesMs, 100))} over ${fmtInt(r.retryLatenciesMs.length)} retries`,
      );
    }
    const reasons = [...r.endReasons.entries()].sort((a, b) => b[1] - a[1]);
    console.log(
      `    end reasons: ${reasons.map(([reason, n]) => `${reason} ${fmtInt(n)} (${fmtPct(n / r.calls)})`).join(', ')}`,
    );
    if (r.errors.length > 0) {
      const first = r.errors[0];
      console.log(
        `    warning: ${r.errors.length} error(s); first: ${first instanceof Error ? (first.stack ?? first.message) : String(first)}`,
      );
    }
  }
  console.log(`  load average ${load1.toFixed(2)} on ${os.availableParallelism()} cores at the end`);

  const complete = (r: Run) =>
    r.state === 'completed' && r.finalContacts === r.contacts && r.errors.length === 0;
  const safe = runs.every(
    (r) => complete(r) && r.duplicates === 0 && r.overAttempts === 0 && r.peakLive <= CONCURRENCY,
  );
  const m = figures[0] as (typeof figures)[number];
  return [
    budget(
      'dialer: zero duplicate dials, attempts within the rules, peak ≤ concurrency',
      safe,
      runs
        .map(
          (r) =>
            `${r.label}: ${fmtInt(r.duplicates)} duplicate(s) over ${fmtInt(r.calls)} calls, peak ${fmtInt(r.peakLive)}` +
            (complete(r)
              ? ''
              : ` (incomplete: ${r.state}, ${fmtInt(r.finalContacts)} final, ${r.errors.length} errors)`),
        )
        .join('; '),
    ),
    budget(
      `dialer: ${fmtInt(CONTACTS)} contacts finished at ≥ ${RATIO_BUDGET} × ${CONCURRENCY} ÷ mean call duration`,
      complete(main) && m.ratio >= RATIO_BUDGET,
      `${fmtRate(m.throughput)} vs ${fmtRate(m.theoretical)} theoretical (${fmtRatio(m.ratio)}), ` +
        `wall ${fmtMs(main.wallMs)}, load ${load1.toFixed(2)}`,
    ),
  ];
}
