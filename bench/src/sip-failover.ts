// The failover part of the sip bench (issue #13: "Kamailio in front of two workers: one worker
// killed with kill -9 during a run, 0 failed new INVITEs").
//
// Two worker processes (lib/sip-worker-child.ts: our SIP stack, media worker and adapter
// answering with a tone, as a worker with SIP_PROXY runs) behind deploy/kamailio/kamailio.cfg,
// started the way the Kamailio tests start it (apps/server/test/kamailio/kamailio-lab.ts). A
// SIPp caller dials through Kamailio at RATE calls/s for SIP_BENCH_FAILOVER_SECONDS, each call
// held HOLD_MS. The same run is made twice on fresh processes: once as the baseline with both
// workers alive, once with one worker sent SIGKILL when half the calls have been answered.
//
// What counts is what the caller saw: an INVITE whose final response was not 200 (or never
// came) is a failed new call, whether it left before or after the kill. Calls already up on the
// killed worker cannot survive it (their BYE gets 408 from Kamailio): they are reported, not
// budgeted.
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { type CallResult, findExecutable, KamailioLab } from '../../apps/server/test/kamailio/kamailio-lab';
import {
  atEmergency,
  type Child,
  nextMessage,
  type Scope,
  spawnTsModule,
  tempDir,
  withScope,
} from './lib/proc';
import { type BudgetResult, budget, fmtInt, fmtMs, fmtRatio, skipped, table } from './lib/report';
import type { WorkerMessage, WorkerRequest } from './lib/sip-worker-child';

const here = path.dirname(fileURLToPath(import.meta.url));
const WORKER_SCRIPT = path.join(here, 'lib', 'sip-worker-child.ts');
const BUDGET_NAME = 'sip: kill -9 of one of two workers behind Kamailio';

const HOST = '127.0.0.1';
/** Kamailio reaches the workers from a second loopback address, their SIP_PROXY, as in the Kamailio tests. */
const WORKER_SIDE = '127.0.0.2';
export const FAILOVER_RATE = 20;
export const FAILOVER_SECONDS = Number(process.env.SIP_BENCH_FAILOVER_SECONDS ?? 30);
const RATE = FAILOVER_RATE;
const SECONDS = FAILOVER_SECONDS;
const HOLD_MS = 2000;
/** kamailio.cfg's INVITE_FIRST_REPLY_MS: an INVITE slower than this waited for a failover. */
const FIRST_REPLY_MS = 1500;
/** Each worker's RTP range: far more than the ~RATE · HOLD_MS / 1000 calls it holds. */
const RTP_PORTS = 200;

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return (
    sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? Number.NaN
  );
};
const fmtS = (ms: number | null) => (ms === null ? 'never' : `+${(ms / 1000).toFixed(2)} s`);

interface WorkerProcess {
  name: string;
  child: Child;
  port: number;
  /** SIP Call-IDs this worker answered, as it reported them (nothing after a kill). */
  answered: Set<string>;
}

async function startWorker(
  scope: Scope,
  name: string,
  rtpPortMin: number,
  proxySocket: string,
  recordingDir: string,
): Promise<WorkerProcess> {
  const child = spawnTsModule(scope, `sip worker ${name}`, WORKER_SCRIPT, {
    SIP_WORKER_HOST: HOST,
    SIP_WORKER_RTP_MIN: String(rtpPortMin),
    SIP_WORKER_RTP_MAX: String(rtpPortMin + RTP_PORTS - 1),
    SIP_WORKER_RECORDINGS: recordingDir,
    SIP_WORKER_PROXY: proxySocket,
    SIP_WORKER_TRUNK_HOST: HOST,
  });
  const answered = new Set<string>();
  child.proc.on('message', (message: WorkerMessage) => {
    if (message.type === 'answered') answered.add(message.callId);
  });
  // A loaded 2-core machine takes seconds to load tsx, the VAD and the media worker.
  const { port } = await nextMessage<WorkerMessage, 'ready'>(child, 'ready', 60_000);
  return { name, child, port, answered };
}

/** A graceful stop of a worker still alive, with what went wrong in it. */
async function stopWorker(worker: WorkerProcess): Promise<string[]> {
  if (worker.child.hasExited() || !worker.child.proc.connected) return [];
  const stopped = nextMessage<WorkerMessage, 'stopped'>(worker.child, 'stopped', 15_000);
  worker.child.proc.send({ type: 'stop' } satisfies WorkerRequest);
  const report = await stopped.catch((err: Error) => ({ failures: [`no clean stop: ${err.message}`] }));
  return report.failures.map((f) => `${worker.name}: ${f}`);
}

interface ClusterRun {
  calls: Map<string, CallResult>;
  exitCode: number | null;
  workers: WorkerProcess[];
  /** Epoch ms of the SIGKILL, null in the baseline. */
  killAt: number | null;
  victim: WorkerProcess | null;
  /** Calls the victim had answered by the kill. */
  victimAnsweredAtKill: number;
  /** From the kill to Kamailio's first "retrying on" of a call, and to the worker taken out of rotation. */
  firstRetryMs: number | null;
  downMs: number | null;
  /** INVITEs Kamailio moved from one worker to the other. */
  retries: number;
  workerFailures: string[];
  proxyLog: string;
}

async function runCluster(kamailio: string, kill: boolean): Promise<ClusterRun> {
  return withScope(async (scope) => {
    const lab = KamailioLab.create(kamailio);
    scope.defer(() => lab.close());
    scope.defer(atEmergency(() => void lab.close()));
    const recordings = tempDir(scope, 'failover-recordings');
    const proxySocket = `${WORKER_SIDE}:${await lab.freePort()}`;
    // Even bases below the ephemeral range, one range per worker as one process per core has.
    const rtpBase = 20_000 + 2 * Math.floor(Math.random() * 4000);
    const workers = await Promise.all(
      ['a', 'b'].map((name, i) => startWorker(scope, name, rtpBase + i * RTP_PORTS, proxySocket, recordings)),
    );
    const proxy = await lab.startProxy(
      workers.map((w) => ({ uri: `sip:${HOST}:${w.port}`, duid: w.name, socket: `udp:${proxySocket}` })),
      { SIP_LISTEN_WORKERS: `udp:${proxySocket}` },
    );
    const total = RATE * SECONDS;
    let finished = false;
    const running = lab
      .placeCalls(proxy, { calls: total, ratePerSecond: RATE, holdMs: HOLD_MS })
      .finally(() => {
        finished = true;
      });

    let killAt: number | null = null;
    let victim: WorkerProcess | null = null;
    let victimAnsweredAtKill = 0;
    let firstRetryMs: number | null = null;
    let downMs: number | null = null;
    if (kill) {
      // Mid-run by the calls themselves, not by the clock: SIPp and the workers start at their own pace.
      const answered = () => workers.reduce((n, w) => n + w.answered.size, 0);
      const limit = performance.now() + SECONDS * 1000 + 30_000;
      while (!finished && answered() < total / 2 && performance.now() < limit) await sleep(20);
      victim = workers[1]!;
      const logFrom = proxy.log().length;
      victimAnsweredAtKill = victim.answered.size;
      killAt = Date.now();
      victim.child.proc.kill('SIGKILL');
      // Kamailio's log lines are timed as they arrive: a few ms late at worst, against seconds.
      while (!finished && (firstRetryMs === null || downMs === null)) {
        const since = proxy.log().slice(logFrom);
        const now = Date.now() - killAt;
        if (firstRetryMs === null && /retrying on/.test(since)) firstRetryMs = now;
        if (downMs === null && /worker down|did not answer call/.test(since)) downMs = now;
        await sleep(10);
      }
    }
    const run = await running;
    const workerFailures = (await Promise.all(workers.map(stopWorker))).flat();
    const log = proxy.log();
    return {
      calls: run.calls,
      exitCode: run.exitCode,
      workers,
      killAt,
      victim,
      victimAnsweredAtKill,
      firstRetryMs,
      downMs,
      retries: (log.match(/retrying on/g) ?? []).length,
      workerFailures,
      proxyLog: log,
    };
  });
}

interface Slice {
  invites: number;
  failed: string[];
  setupMs: number[];
}

function slice(calls: [string, CallResult][]): Slice {
  return {
    invites: calls.length,
    failed: calls
      .filter(([, c]) => c.invite !== 200)
      .map(([id, c]) => `${id}: ${c.invite ?? 'no final response'}`),
    setupMs: calls
      .filter(([, c]) => c.invite === 200 && c.inviteSentAt !== undefined && c.inviteFinalAt !== undefined)
      .map(([, c]) => c.inviteFinalAt! - c.inviteSentAt!),
  };
}

const row = (label: string, s: Slice, workers: string) => [
  label,
  fmtInt(s.invites),
  fmtInt(s.failed.length),
  fmtMs(percentile(s.setupMs, 50)),
  fmtMs(percentile(s.setupMs, 95)),
  fmtMs(percentile(s.setupMs, 99)),
  fmtMs(s.setupMs.reduce((a, b) => Math.max(a, b), 0)),
  workers,
];

export async function failoverBench(sipp: string | null): Promise<BudgetResult[]> {
  const kamailio = findExecutable('kamailio');
  if (!kamailio || !sipp) {
    const missing = !kamailio ? 'kamailio (apt-get install kamailio)' : 'sipp (apt-get install sip-tester)';
    return [skipped(BUDGET_NAME, `not measured: ${missing} is not installed`)];
  }
  if (!(SECONDS >= 4)) throw new Error('SIP_BENCH_FAILOVER_SECONDS must be at least 4');
  const expected = RATE * SECONDS;

  const base = await runCluster(kamailio, false);
  const withKill = await runCluster(kamailio, true);

  const killAt = withKill.killAt ?? Number.POSITIVE_INFINITY;
  const all = [...withKill.calls];
  // An INVITE that left before the kill may still have been on its way to the victim.
  const before = slice(all.filter(([, c]) => (c.inviteSentAt ?? 0) < killAt));
  const after = slice(all.filter(([, c]) => (c.inviteSentAt ?? 0) >= killAt));
  const whole = slice(all);
  const baseline = slice([...base.calls]);
  const split = (run: ClusterRun, ids: (id: string) => boolean) =>
    run.workers.map((w) => `${w.name} ${[...w.answered].filter(ids).length}`).join(', ');
  console.log(
    table(
      ['INVITEs', 'sent', 'failed', 'p50', 'p95', 'p99', 'max', 'answered by'],
      [
        row(
          'baseline, both workers alive',
          baseline,
          split(base, () => true),
        ),
        row(
          'kill -9 run, sent before the kill',
          before,
          split(withKill, (id) => (withKill.calls.get(id)?.inviteSentAt ?? 0) < killAt),
        ),
        row(
          'kill -9 run, sent after the kill',
          after,
          split(withKill, (id) => (withKill.calls.get(id)?.inviteSentAt ?? 0) >= killAt),
        ),
        row(
          'kill -9 run, whole',
          whole,
          split(withKill, () => true),
        ),
      ],
    ),
  );

  const victim = withKill.victim;
  const victimCalls = victim?.answered ?? new Set<string>();
  // Up on the victim at the kill: answered there, and the caller's BYE never got its 200.
  const lost = all.filter(([, c]) => c.invite === 200 && c.bye !== 200);
  const lostOnVictim = lost.filter(([id]) => victimCalls.has(id)).length;
  // Kamailio's timers tick coarsely: a call moved on after 1.5 s can show 1.48 s at the caller.
  const waited = after.setupMs.filter((ms) => ms >= FIRST_REPLY_MS * 0.9).length;
  const killedAtS =
    all.length > 0 ? (killAt - Math.min(...all.map(([, c]) => c.inviteSentAt ?? killAt))) / 1000 : 0;
  if (victim) {
    console.log(
      `  worker ${victim.name} killed (SIGKILL) ${killedAtS.toFixed(1)} s into the run, after answering ` +
        `${withKill.victimAnsweredAtKill} calls; Kamailio's first failover ${fmtS(withKill.firstRetryMs)}, ` +
        `worker out of rotation ${fmtS(withKill.downMs)} after the kill; ${withKill.retries} INVITEs moved to the other worker, ` +
        `${waited} of them after waiting out Kamailio's ${fmtMs(FIRST_REPLY_MS)} for a first reply`,
    );
  }
  console.log(
    `  calls up on the killed worker and lost with it (their BYE got no 200; expected, not budgeted): ` +
      `${lost.length} (${lostOnVictim} answered by ${victim?.name ?? '?'}); baseline calls whose BYE failed: ` +
      `${[...base.calls.values()].filter((c) => c.invite === 200 && c.bye !== 200).length}`,
  );
  const p95 = (s: Slice) => percentile(s.setupMs, 95);
  const baseP95 = Math.max(1, p95(baseline));
  console.log(
    `  setup p95 with the kill against the baseline's ${fmtMs(p95(baseline))}: whole run ${fmtRatio(p95(whole) / baseP95)}, ` +
      `before the kill ${fmtRatio(p95(before) / baseP95)}, after it ${fmtRatio(p95(after) / baseP95)}`,
  );
  for (const run of [base, withKill]) {
    if (run.workerFailures.length > 0)
      console.log(`  worker errors: ${run.workerFailures.slice(0, 5).join('; ')}`);
  }
  const failedAll = [...before.failed, ...after.failed];
  if (failedAll.length > 0 || baseline.failed.length > 0) {
    console.log(`  failed INVITEs: ${[...failedAll, ...baseline.failed].slice(0, 10).join('; ')}`);
    console.log(`  Kamailio's log (tail):\n${withKill.proxyLog.slice(-3000)}`);
  }

  const complete = withKill.calls.size === expected && base.calls.size === expected;
  const killed = withKill.killAt !== null && after.invites > 0;
  return [
    budget(
      BUDGET_NAME,
      complete && killed && failedAll.length === 0,
      `${fmtInt(failedAll.length)} failed new INVITEs (${after.failed.length} of ${fmtInt(after.invites)} after the kill, ` +
        `${before.failed.length} of ${fmtInt(before.invites)} before; baseline ${baseline.failed.length} of ` +
        `${fmtInt(baseline.invites)}); setup p95 after the kill ${fmtMs(p95(after))} ` +
        `(baseline ${fmtMs(p95(baseline))}, ${fmtRatio(p95(after) / baseP95)})` +
        (complete ? '' : `; SIPp placed ${withKill.calls.size} and ${base.calls.size} of ${expected} calls`) +
        (killed ? '' : '; no INVITE left after the kill'),
    ),
  ];
}
