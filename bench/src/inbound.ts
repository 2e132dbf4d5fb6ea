// Issue budget. `inbound`: 500 concurrent simulated inbound calls on one worker, through the engine's
// one inbound path (answerCall: route lookup, published assistant, admission under the project's
// concurrentCallin, then the session with every turn written), on a fresh in-memory PGlite and a
// virtual clock. Budgets: per-turn session overhead p99 at most 5 ms, and no call admitted beyond
// concurrentCallin, whose peak is recorded inside the admitting transaction by a trigger.
import { randomUUID } from 'node:crypto';
import os from 'node:os';
import { type AssistantConfig, assistantConfig, type EndReason } from '@callpilot/contracts';
import { PGlite } from '@electric-sql/pglite';
import { type DatabaseHandle, openDatabase } from '../../apps/server/src/db/client';
import {
  assistants,
  assistantVersions,
  projectLimits,
  projectNumbers,
  projects,
} from '../../apps/server/src/db/schema';
import { answerCall } from '../../apps/server/src/engine/call/answer-call';
import type { CallDeps, CallOutcome } from '../../apps/server/src/engine/call/run-call';
import { VirtualClock } from '../../apps/server/src/engine/clock';
import { Random } from '../../apps/server/src/engine/telephony/sim/random';
import { createSimCarrier } from '../../apps/server/src/engine/telephony/sim/sim-carrier';
import { ASSISTANT_TEMPLATES } from '../../apps/server/src/modules/assistants/assistants.templates';
import { CallEventHub } from '../../apps/server/src/modules/calls/call-events';
import { CallRepository } from '../../apps/server/src/modules/calls/call-repository';
import { createCallPorts } from '../../apps/server/src/runtime/call-ports';
import { LiveCalls } from '../../apps/server/src/runtime/live-calls';
import { type BudgetResult, budget, fmtInt, fmtMs, fmtPct, fmtRatio, table } from './lib/report';

/** The project's concurrentCallin: as many calls as the 500 concurrent calls talk at once. */
const CALLIN_LIMIT = Number(process.env.BENCH_INBOUND_LIMIT ?? 500);
/** Callers who dial at the same instant at the start: the line fills, the surplus hears busy. */
const WAVE = Number(process.env.BENCH_INBOUND_WAVE ?? 600);
/** Callers who keep arriving afterwards (Poisson), at ARRIVAL_LOAD × the full line's service rate. */
const ARRIVALS = Number(process.env.BENCH_INBOUND_ARRIVALS ?? 1_000);
const ARRIVAL_LOAD = 2;
const WARMUP_CALLS = 20;
const SEQUENTIAL_CALLS = 100;
const TURN_P99_BUDGET_MS = 5;
const WALL_LIMIT_MS = 5 * 60_000;
/** The project's service line (a fictitious Shanghai landline) bound to the assistant. */
const SERVICE_NUMBER = '02160882000';
/** Monday 10:00 China time. */
const START_AT = Date.parse('2026-03-02T10:00:00+08:00');

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? Number.NaN;

function summarise(samples: number[]) {
  const sorted = [...samples].sort((a, b) => a - b);
  return {
    n: sorted.length,
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    max: sorted.at(-1) ?? Number.NaN,
  };
}

/**
 * The scheduler probe: a fixed synchronous chunk of work, timed on the wall clock like the session's
 * own synchronous stretches. Whatever it takes beyond its idle time is the OS running something else
 * (or a GC pause), which the session's overhead meter counts too: it tells a busy machine from a
 * slow engine.
 */
const PROBE_ITERATIONS = 200_000;
const PROBE_EVERY_MS = 25;
let probeSink = 0;
function probe(): number {
  const t0 = performance.now();
  let x = probeSink;
  for (let i = 0; i < PROBE_ITERATIONS; i++) x = (Math.imul(x, 31) + i) | 0;
  probeSink = x;
  return performance.now() - t0;
}

const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : Number.NaN);
const fmtMs2 = (ms: number) => `${ms.toFixed(2)} ms`;
const fmtMiB = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
const fmtS = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

interface Run {
  label: string;
  offered: number;
  answered: number;
  refused: number;
  /** Callers whose offer was neither answered nor refused busy (not routed, cancelled). */
  other: number;
  /** What the callers heard: busy from the carrier (the engine refused them for callin_limit). */
  heardBusy: number;
  turns: number;
  overheadMs: number[];
  /** Simulated ms from the offer to the end of the conversation, answered calls only. */
  durationsMs: number[];
  /** Wall ms of the scheduler probe's fixed chunk, every PROBE_EVERY_MS during the run. */
  probeMs: number[];
  /** Wall ms of the repository's createInbound (waiting for PGlite included). */
  admissionMs: number[];
  endReasons: Map<EndReason, number>;
  wallMs: number;
  simulatedMs: number;
  peakRss: number;
  /** Most calls the engine was running at once, refused ones included while they were decided. */
  peakInFlight: number;
}

const newRun = (label: string): Run => ({
  label,
  offered: 0,
  answered: 0,
  refused: 0,
  other: 0,
  heardBusy: 0,
  turns: 0,
  overheadMs: [],
  durationsMs: [],
  probeMs: [],
  admissionMs: [],
  endReasons: new Map(),
  wallMs: 0,
  simulatedMs: 0,
  peakRss: process.memoryUsage().rss,
  peakInFlight: 0,
});

/** One project with a balance and concurrentCallin, its published assistant, and a number bound to it. */
async function seedProject(handle: DatabaseHandle) {
  const db = handle.db;
  const projectId = randomUUID();
  await db.insert(projects).values({ id: projectId, name: 'bench-inbound' });
  await db.insert(projectLimits).values({ projectId, hasBalance: true, concurrentCallin: CALLIN_LIMIT });
  // The 售后通知 template is the one meant for inbound as well as outbound calls.
  const template =
    ASSISTANT_TEMPLATES.find((t) => t.use === 'both') ??
    ASSISTANT_TEMPLATES.find((t) => t.use === 'outbound') ??
    ASSISTANT_TEMPLATES[0];
  if (!template) throw new Error('no assistant template');
  const config: AssistantConfig = assistantConfig.parse(template.config);
  const assistantId = randomUUID();
  await db.insert(assistants).values({
    id: assistantId,
    projectId,
    name: template.name,
    use: template.use,
    config,
    templateKey: template.key,
    publishedVersion: 1,
  });
  await db.insert(assistantVersions).values({
    assistantId,
    version: 1,
    projectId,
    name: template.name,
    use: template.use,
    config,
    draftRevision: 1,
  });
  await db.insert(projectNumbers).values({
    projectId,
    number: SERVICE_NUMBER,
    label: '客服热线（压测）',
    inboundAssistantId: assistantId,
  });
  return { projectId, template: template.key };
}

/**
 * Bench-only: every inbound call row, as it is inserted (inside the admitting transaction, after
 * the row, under the repository's advisory lock), logs how many inbound calls of its project are
 * live at that instant. PGlite runs one statement at a time, so this is the exact number of
 * simultaneously live admitted calls, not a sample: for an admitted row it includes the row, for
 * a refused one (inserted already ended, `callin_limit`) it is what the caller found.
 */
async function installAdmissionLog(client: PGlite) {
  await client.exec(`
    create table bench_callin_log (
      seq serial primary key,
      call_id text not null,
      admitted boolean not null,
      live integer not null
    );
    create function bench_callin_log() returns trigger language plpgsql as $$
    begin
      insert into bench_callin_log (call_id, admitted, live)
      select new.id, new.status <> 'ended', count(*)::int from calls
       where project_id = new.project_id and direction = 'inbound' and status <> 'ended';
      return null;
    end $$;
    create trigger bench_callin_log after insert on calls
      for each row when (new.direction = 'inbound') execute function bench_callin_log();
  `);
}

export async function inboundBenchmark(): Promise<BudgetResult[]> {
  const rssAtStart = process.memoryUsage().rss;
  const client = await PGlite.create();
  // BENCH_INBOUND_PROFILE=1: count and time every statement (time includes waiting for PGlite's one
  // connection), to see where the wall time goes.
  const profile = process.env.BENCH_INBOUND_PROFILE ? new Map<string, { n: number; ms: number }>() : null;
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
  const carrier = createSimCarrier({ clock, seed: 'bench-inbound' });
  const errors: unknown[] = [];
  const onError = (err: unknown) => {
    errors.push(err);
  };
  let stopClock: (() => void) | undefined;
  let live: LiveCalls | undefined;
  try {
    await handle.migrate();
    const db = handle.db;
    const { projectId, template } = await seedProject(handle);
    await installAdmissionLog(client);

    // The run the callbacks below report to (warm-up, baseline, loaded).
    let run = newRun('');
    let inFlight = 0;
    const dialledAt = new Map<string, number>();

    class TimedRepository extends CallRepository {
      override async createInbound(...args: Parameters<CallRepository['createInbound']>) {
        const t0 = performance.now();
        try {
          return await super.createInbound(...args);
        } finally {
          run.admissionMs.push(performance.now() - t0);
        }
      }
    }
    const repository = new TimedRepository(db, new CallEventHub(), {
      owner: `bench-${randomUUID()}`,
      singleProcess: true,
    });
    // As in the runtime: the registry renews the live calls' leases (30 s of wall time, renewed every
    // 10 s). Without it a call that outlives its lease in wall time looks orphaned to the admission
    // count: a loaded run without the registry (~50 s of wall) admitted beyond the limit.
    live = new LiveCalls(repository, onError);
    await live.start(handle);
    const deps: CallDeps = {
      ports: createCallPorts({
        db,
        repository,
        resolveProvider: async () => null,
        resolveRecognizer: async () => null,
        resolveSynthesizer: async () => null,
        embedderFor: async () => undefined,
        onError,
      }),
      carrier,
      clock,
      onError,
      observe: (callId, session) => {
        run.overheadMs.push(...session.overheadMs);
        run.turns += session.turns.length;
        const at = dialledAt.get(callId);
        if (at !== undefined) run.durationsMs.push(session.endedAt - at);
      },
    };

    // The runtime's way: the carrier's offers go to answerCall, each call tracked by the registry.
    const answering = new Map<string, Promise<CallOutcome | null>>();
    carrier.onInbound((offer) => {
      const call = answerCall(deps, offer);
      answering.set(offer.callId, call);
      const registry = live as LiveCalls;
      registry.add(
        offer.callId,
        { projectId, direction: 'inbound', hangUp: () => carrier.hangUpRemote(offer.callId) },
        call,
      );
    });

    let callerSeq = 0;
    const dial = async (callId: string) => {
      const r = run;
      r.offered++;
      inFlight++;
      r.peakInFlight = Math.max(r.peakInFlight, inFlight);
      dialledAt.set(callId, clock.now());
      const n = callerSeq++;
      const from = `139${String(10_000_000 + ((n * 7919) % 89_999_999)).slice(0, 8)}`;
      try {
        // No persona: the carrier picks one of the talking personas for each caller.
        const heard = await carrier.simulateInbound({ callId, from, to: SERVICE_NUMBER });
        if (!heard.answered && heard.cause === 'busy') r.heardBusy++;
        const outcome = await answering.get(callId);
        answering.delete(callId);
        const reason = outcome?.endReason;
        if (reason) r.endReasons.set(reason, (r.endReasons.get(reason) ?? 0) + 1);
        if (reason === 'callin_limit') r.refused++;
        else if (heard.answered) r.answered++;
        else r.other++;
      } finally {
        inFlight--;
        dialledAt.delete(callId);
      }
    };

    const sampler = setInterval(() => {
      run.peakRss = Math.max(run.peakRss, process.memoryUsage().rss);
    }, 100);
    const prober = setInterval(() => {
      run.probeMs.push(probe());
    }, PROBE_EVERY_MS);
    stopClock = clock.autoAdvance();
    const measure = async (label: string, work: () => Promise<void>) => {
      run = newRun(label);
      const started = performance.now();
      const startedAt = clock.now();
      await work();
      run.wallMs = performance.now() - started;
      run.simulatedMs = clock.now() - startedAt;
      run.peakRss = Math.max(run.peakRss, process.memoryUsage().rss);
      return run;
    };
    const oneAtATime = (prefix: string, count: number) => async () => {
      for (let i = 0; i < count; i++) await dial(`${prefix}-${i}`);
    };

    let baseline: Run;
    let loaded: Run;
    let logFrom = 0;
    let arrivalGapMs = 0;
    try {
      // Warm-up: lets V8 optimise the session, brain, carrier, repository and PGlite paths first.
      await measure('warm-up', oneAtATime('in-warm', WARMUP_CALLS));
      baseline = await measure(
        `1 call at a time (${fmtInt(SEQUENTIAL_CALLS)} in a row)`,
        oneAtATime('in-base', SEQUENTIAL_CALLS),
      );
      // The full line's service rate is limit ÷ mean call duration; arrivals come at ARRIVAL_LOAD × it.
      arrivalGapMs = mean(baseline.durationsMs) / (ARRIVAL_LOAD * CALLIN_LIMIT);
      const last = await client.query<{ seq: number | null }>(
        'select max(seq)::int as seq from bench_callin_log',
      );
      logFrom = last.rows[0]?.seq ?? 0;
      loaded = await measure(
        `${fmtInt(WAVE)} at once, then ${fmtInt(ARRIVALS)} arriving (${ARRIVAL_LOAD}x service rate)`,
        async () => {
          const calls: Promise<void>[] = [];
          for (let i = 0; i < WAVE; i++) calls.push(dial(`in-load-${i}`));
          const rng = new Random('bench-inbound-arrivals');
          for (let k = 0; k < ARRIVALS; k++) {
            // Exponential gaps: a Poisson stream of callers, on the simulated clock.
            await clock.sleep(-Math.log(1 - rng.next()) * arrivalGapMs);
            calls.push(dial(`in-load-${WAVE + k}`));
          }
          const all = Promise.all(calls);
          let timer: NodeJS.Timeout | undefined;
          const limit = new Promise<never>((_, reject) => {
            timer = setTimeout(() => reject(new Error('loaded run exceeded its wall limit')), WALL_LIMIT_MS);
          });
          try {
            await Promise.race([all, limit]);
          } finally {
            clearTimeout(timer);
          }
        },
      );
    } finally {
      clearInterval(sampler);
      clearInterval(prober);
    }
    const maxRss = process.resourceUsage().maxRSS * 1024;
    // What the database says: every call of the loaded run, and the admission log's exact peak.
    const counted = await client.query<{
      total: number;
      refused: number;
      admitted: number;
      still_live: number;
      turns: number;
    }>(
      `select count(*)::int as total,
             count(*) filter (where end_reason = 'callin_limit')::int as refused,
             count(*) filter (where end_reason is distinct from 'callin_limit')::int as admitted,
             count(*) filter (where status <> 'ended')::int as still_live,
             coalesce(sum(turn_count), 0)::int as turns
         from calls where project_id = $1 and direction = 'inbound' and id like 'in-load-%'`,
      [projectId],
    );
    const rows = counted.rows[0];
    const logged = await client.query<{
      admissions: number;
      refusals: number;
      peak: number | null;
      min_at_refusal: number | null;
      max_at_refusal: number | null;
      filled: number;
      over_limit: number;
    }>(
      `select count(*) filter (where admitted)::int as admissions,
             count(*) filter (where not admitted)::int as refusals,
             max(live) filter (where admitted)::int as peak,
             min(live) filter (where not admitted)::int as min_at_refusal,
             max(live) filter (where not admitted)::int as max_at_refusal,
             count(*) filter (where admitted and live = $1)::int as filled,
             count(*) filter (where admitted and live > $1)::int as over_limit
         from bench_callin_log where seq > $2`,
      [CALLIN_LIMIT, logFrom],
    );
    const log = logged.rows[0];
    const [load1 = 0] = os.loadavg();

    console.log(
      `  the engine's inbound path (answerCall: route lookup, published assistant, admission, session, ` +
        `turns, end, analysis) with the real CallRepository and ports on a fresh in-memory PGlite, ` +
        `script brain, simulated carrier (talking personas), virtual clock with DB I/O tracked; ` +
        `template ${template}, concurrentCallin ${fmtInt(CALLIN_LIMIT)}, leases renewed by the runtime's ` +
        `LiveCalls. Loaded run: ${fmtInt(WAVE)} callers dial the number at the same instant (the line ` +
        `fills, the rest hear busy), then ${fmtInt(ARRIVALS)} more arrive as a Poisson stream at ` +
        `${ARRIVAL_LOAD}x the full line's service rate (${fmtInt(CALLIN_LIMIT)} ÷ the baseline's mean ` +
        `call of ${fmtS(mean(baseline.durationsMs))}: one every ${fmtMs(arrivalGapMs)} simulated), so ` +
        `the line stays full while they come and each call that ends frees one slot. Peak live = ` +
        `live inbound rows counted by a trigger inside every admitting transaction (exact, not sampled). ` +
        `Overhead = SessionResult.overheadMs of every answered call (session CPU per assistant turn; ` +
        `brain, database, carrier and clock waits excluded).`,
    );
    const base = summarise(baseline.overheadMs);
    const real = summarise(loaded.overheadMs);
    console.log(
      table(
        ['overhead per assistant turn', 'turns', 'p50', 'p99', 'max'],
        [
          [
            `baseline: ${baseline.label}`,
            fmtInt(base.n),
            fmtMs2(base.p50),
            fmtMs2(base.p99),
            fmtMs2(base.max),
          ],
          [loaded.label, fmtInt(real.n), fmtMs2(real.p50), fmtMs2(real.p99), fmtMs2(real.max)],
        ],
      ),
    );
    const ratio = real.p99 / Math.max(base.p99, 0.001);
    console.log(`  ratio loaded / sequential at p99: ${fmtRatio(ratio)}`);
    const probes = [baseline, loaded].map((r) => [r.label, summarise(r.probeMs)] as const);
    // Its idle time: the fastest it ever ran (once optimised, nothing else running).
    const idleProbe = Math.min(...baseline.probeMs, ...loaded.probeMs);
    console.log(
      table(
        [`scheduler probe (fastest ${fmtMs2(idleProbe)})`, 'samples', 'p50', 'p99', 'max'],
        probes.map(([label, p]) => [label, fmtInt(p.n), fmtMs2(p.p50), fmtMs2(p.p99), fmtMs2(p.max)]),
      ),
    );
    console.log(
      `  the probe is a fixed synchronous chunk timed on the wall clock every ${PROBE_EVERY_MS} ms, as the ` +
        `session times its own stretches: what it takes beyond its fastest is the OS running other ` +
        `processes (or a GC pause), which the overhead figures above include in the same way.`,
    );
    console.log(
      table(
        [
          'run',
          'offered',
          'answered',
          'refused',
          'turns',
          'wall',
          'offered/s',
          'answered/s',
          'simulated',
          'peak in flight',
          'peak RSS',
        ],
        [baseline, loaded].map((r) => [
          r.label,
          fmtInt(r.offered),
          fmtInt(r.answered),
          fmtInt(r.refused),
          fmtInt(r.turns),
          fmtMs(r.wallMs),
          fmtInt(r.offered / (r.wallMs / 1000)),
          fmtInt(r.answered / (r.wallMs / 1000)),
          fmtS(r.simulatedMs),
          fmtInt(r.peakInFlight),
          fmtMiB(r.peakRss),
        ]),
      ),
    );
    const admit = summarise(loaded.admissionMs);
    const baseAdmit = summarise(baseline.admissionMs);
    console.log(
      `  admission (createInbound, wall, waiting for PGlite included): p50 ${fmtMs2(admit.p50)}, ` +
        `p99 ${fmtMs2(admit.p99)} loaded; p50 ${fmtMs2(baseAdmit.p50)}, p99 ${fmtMs2(baseAdmit.p99)} one at a time`,
    );
    console.log(
      `  database, loaded run: ${fmtInt(rows?.total ?? 0)} inbound rows, ${fmtInt(rows?.admitted ?? 0)} admitted, ` +
        `${fmtInt(rows?.refused ?? 0)} callin_limit, ${fmtInt(rows?.still_live ?? 0)} still live, ` +
        `${fmtInt(rows?.turns ?? 0)} turns recorded; callers heard busy ${fmtInt(loaded.heardBusy)}`,
    );
    console.log(
      `  line: peak ${fmtInt(log?.peak ?? 0)} live of ${fmtInt(CALLIN_LIMIT)}; ` +
        `${fmtInt(log?.filled ?? 0)} admissions took the last free slot; ` +
        `${fmtInt(log?.refusals ?? 0)} offers found the line full (live at refusal min ` +
        `${log?.min_at_refusal ?? '-'}, max ${log?.max_at_refusal ?? '-'})`,
    );
    const answeredCalls = summarise(loaded.durationsMs);
    const reasons = [...loaded.endReasons.entries()].sort((a, b) => b[1] - a[1]);
    console.log(
      `  call (offer → end, simulated) mean ${fmtS(mean(loaded.durationsMs))}, p50 ${fmtS(answeredCalls.p50)}, ` +
        `max ${fmtS(answeredCalls.max)}; end reasons: ` +
        reasons.map(([reason, n]) => `${reason} ${fmtInt(n)} (${fmtPct(n / loaded.offered)})`).join(', '),
    );
    console.log(
      `  RSS: ${fmtMiB(rssAtStart)} before the runs, peak ${fmtMiB(loaded.peakRss)} sampled every 100 ms ` +
        `during the loaded run, process max ${fmtMiB(maxRss)}; load average ${load1.toFixed(2)} on ` +
        `${os.availableParallelism()} cores at the end`,
    );
    if (errors.length > 0) {
      const first = errors[0];
      console.log(
        `  warning: ${errors.length} error(s); first: ` +
          `${first instanceof Error ? (first.stack ?? first.message) : String(first)}`,
      );
    }

    const peak = log?.peak ?? Number.POSITIVE_INFINITY;
    const consistent =
      rows !== undefined &&
      log !== undefined &&
      rows.total === loaded.offered &&
      rows.admitted === loaded.answered + loaded.other &&
      rows.refused === loaded.refused &&
      loaded.heardBusy === loaded.refused &&
      log.admissions === rows.admitted &&
      log.refusals === rows.refused &&
      rows.still_live === 0;
    // The other side of exact: nobody heard busy while a slot was free.
    const noEarlyRefusal = log?.min_at_refusal == null || log.min_at_refusal >= CALLIN_LIMIT;
    return [
      budget(
        `inbound: overhead per turn p99 <= ${TURN_P99_BUDGET_MS} ms with ${fmtInt(CALLIN_LIMIT)} concurrent inbound calls`,
        real.p99 <= TURN_P99_BUDGET_MS && errors.length === 0,
        errors.length > 0
          ? `${errors.length} error(s) during the calls, figures are not valid`
          : `${fmtMs2(real.p99)} over ${fmtInt(real.n)} turns (${fmtRatio(ratio)} of 1 call at a time), ` +
              `load ${load1.toFixed(2)}`,
      ),
      budget(
        'inbound: 0 calls admitted beyond concurrentCallin',
        peak <= CALLIN_LIMIT && (log?.over_limit ?? 1) === 0 && consistent,
        `peak ${fmtInt(peak)} live of ${fmtInt(CALLIN_LIMIT)}, ${fmtInt(log?.over_limit ?? 0)} admitted beyond; ` +
          `${fmtInt(rows?.admitted ?? 0)} admitted, ${fmtInt(rows?.refused ?? 0)} refused (callin_limit) of ` +
          `${fmtInt(loaded.offered)} offered` +
          (consistent ? '' : ' (INCONSISTENT: engine, callers and database disagree, see above)') +
          (noEarlyRefusal ? '' : `; a caller was refused with only ${log?.min_at_refusal} live`),
      ),
    ];
  } finally {
    if (profile) {
      for (const [q, e] of [...profile].sort((a, b) => b[1].ms - a[1].ms).slice(0, 30)) {
        console.log(`${String(e.n).padStart(7)} ${e.ms.toFixed(0).padStart(7)} ms  ${q}`);
      }
    }
    stopClock?.();
    await live?.stop();
    await carrier.close();
    await handle.close();
  }
}
