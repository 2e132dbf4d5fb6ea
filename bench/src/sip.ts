// Issue #13 budgets for real phone lines, on loopback against SIPp (Debian sip-tester). The
// process under test is this one: the SIP stack, the media worker and the `sip` adapter from
// apps/server/src/engine/telephony, with an auto-answer handler that answers every call and
// plays a tone (no assistant, no database). SIPp places the calls; the SDP of its INVITEs names
// an RTP probe in a child process (lib/rtp-probe.ts), which receives every leg's packets and
// sends each leg 20 ms A-law packets back, so every leg receives, decodes, records and sends.
//
//  answer   INVITE → 200 p95 at 30 calls/s with 200 calls up, 600 calls; baseline: SIPp's own
//           uas answering the same calls. Budget p95 ≤ 100 ms.
//  pacing   200 legs for SIP_BENCH_MINUTES (default 1; the issue's figure is 10): 0 lost 20 ms
//           ticks at the receiver, send lateness p99 ≤ 20 ms, receiver interarrival jitter
//           (RFC 3550, sampled each second) p99 ≤ 5 ms; baseline: a setInterval(20) sender on
//           this process's main thread, measured by the same probe at the same time.
//  legs     the same 200 legs on one media worker: its thread's CPU ≤ 1 core, RSS reported;
//           baseline: the probe's CPU for the same packets (bare UDP I/O, nothing decoded).
//  in a row 600 calls, half hung up by us and half by SIPp: 0 failures, then 0 transactions,
//           dialogs, legs and RTP ports once RFC 3261's timers (64·T1) have run out.
//  failover two worker processes (the same worker) behind deploy/kamailio/kamailio.cfg, one
//           killed with SIGKILL at mid-run of 20 calls/s: 0 failed new INVITEs; baseline: the
//           same run with both alive (sip-failover.ts).
import dgram from 'node:dgram';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { loadVad, type Vad } from '../../apps/server/src/engine/speech/vad';
import {
  type Child,
  nextMessage,
  type Scope,
  spawnChild,
  spawnTsModule,
  tempDir,
  withScope,
} from './lib/proc';
import { type BudgetResult, budget, fmtInt, fmtMs, fmtRatio, table } from './lib/report';
import type { ProbeMessage, ProbeReport, ProbeRequest } from './lib/rtp-probe';
import { type SipWorker, startSipWorker } from './lib/sip-worker';
import { FAILOVER_RATE, FAILOVER_SECONDS, failoverBench } from './sip-failover';

const SIPP = '/usr/bin/sipp';
const HOST = '127.0.0.1';
const here = path.dirname(fileURLToPath(import.meta.url));
const FIXTURES = path.join(here, '..', 'fixtures');
const MEDIA_SCENARIO = path.join(FIXTURES, 'sipp-uac-media.xml');
const EITHER_BYE_SCENARIO = path.join(FIXTURES, 'sipp-uac-either-bye.xml');

const MINUTES = Number(process.env.SIP_BENCH_MINUTES ?? 1);
const LEGS = Number(process.env.SIP_BENCH_LEGS ?? 200);
/** Which parts run (all by default): the 10-minute pacing run need not repeat the others. */
const PARTS = new Set(
  (process.env.SIP_BENCH_PARTS ?? 'answer,pacing,row,failover').split(',').map((p) => p.trim()),
);
const RATE = 30;
const CALLS_UP = 200;
const ANSWER_CALLS = 600;
const ROW_CALLS = 600;
const P95_BUDGET_MS = 100;
const LATENESS_P99_BUDGET_MS = 20;
const JITTER_BUDGET_MS = 5;
/** RFC 3261's default; the stack under test runs with it, as production does. */
const T1_MS = 500;

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return (
    sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? Number.NaN
  );
};
const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);
// Not Math.max(...values): a 10-minute run has 120,000 jitter samples, beyond the argument limit.
const max = (values: number[]) => values.reduce((a, b) => Math.max(a, b), Number.NEGATIVE_INFINITY);
const min = (values: number[]) => values.reduce((a, b) => Math.min(a, b), Number.POSITIVE_INFINITY);
const fmtMs1 = (ms: number) => `${ms.toFixed(1)} ms`;
const fmtMiB = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
const fmtCores = (share: number) => `${share.toFixed(2)} core`;

function freeUdpPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const socket = dgram.createSocket('udp4');
    socket.once('error', reject);
    socket.bind(0, HOST, () => {
      const { port } = socket.address();
      socket.close(() => resolve(port));
    });
  });
}

/** UDP datagrams the kernel dropped for a full receive buffer, machine-wide (Linux). */
function udpReceiveBufferErrors(): number | null {
  try {
    const lines = fs
      .readFileSync('/proc/net/snmp', 'utf8')
      .split('\n')
      .filter((l) => l.startsWith('Udp:'));
    const names = lines[0]?.split(/\s+/) ?? [];
    const values = lines[1]?.split(/\s+/) ?? [];
    const at = names.indexOf('RcvbufErrors');
    return at > 0 ? Number(values[at]) : null;
  } catch {
    return null;
  }
}

// --- The RTP probe (far end media) -------------------------------------------------------------

interface Probe {
  port: number;
  mark(): void;
  report(): Promise<ProbeReport>;
}

async function startProbe(scope: Scope): Promise<Probe> {
  const child = spawnTsModule(scope, 'rtp-probe', path.join(here, 'lib', 'rtp-probe.ts'), {
    PROBE_HOST: HOST,
  });
  const send = (request: ProbeRequest) => child.proc.send(request);
  scope.defer(() => {
    if (!child.hasExited() && child.proc.connected) send({ type: 'stop' });
  });
  const { port } = await nextMessage<ProbeMessage, 'ready'>(child, 'ready', 30_000);
  return {
    port,
    mark: () => send({ type: 'mark' }),
    async report() {
      const reply = nextMessage<ProbeMessage, 'report'>(child, 'report', 30_000);
      send({ type: 'report' });
      return (await reply).report;
    },
  };
}

// --- SIPp --------------------------------------------------------------------------------------

interface SippRun {
  code: number | null;
  output: string;
  /** INVITE → 200 of each call, ms (SIPp's rtd, 1 ms resolution). */
  responseMs: number[];
  /** When each 200 came, ms on SIPp's clock. */
  answeredAtMs: number[];
  /** The last line of SIPp's statistics file: SuccessfulCall(C), FailedCall(C), CallRate(C), ... */
  stats: Map<string, string>;
  wallMs: number;
}

const statNumber = (run: SippRun, name: string) => Number(run.stats.get(name) ?? Number.NaN);

/** Calls answered per second while SIPp was placing them (its own CallRate counts the last calls' tail too). */
const answerRate = (run: SippRun) =>
  run.answeredAtMs.length > 1
    ? ((run.answeredAtMs.length - 1) * 1000) / (max(run.answeredAtMs) - min(run.answeredAtMs))
    : Number.NaN;

/** Runs SIPp to completion (killed after `limitMs`), with response times and statistics traced. */
async function runSipp(scope: Scope, label: string, args: string[], limitMs: number): Promise<SippRun> {
  const dir = tempDir(scope, `sipp-${label}`);
  const statFile = path.join(dir, 'stats.csv');
  const started = performance.now();
  const child = spawnChild(
    scope,
    `sipp ${label}`,
    SIPP,
    [
      ...args,
      ...['-nostdin', '-timeout', `${Math.ceil(limitMs / 1000)}s`, '-timeout_error'],
      ...['-trace_rtt', '-rtt_freq', '1', '-trace_stat', '-stf', statFile, '-fd', '1'],
    ],
    { cwd: dir, env: process.env },
  );
  const limit = sleep(limitMs + 10_000, 'limit' as const);
  if ((await Promise.race([child.exit, limit])) === 'limit') await child.stop(2000);
  const exit = await child.exit;
  const responseMs: number[] = [];
  const answeredAtMs: number[] = [];
  for (const file of fs.readdirSync(dir).filter((f) => f.endsWith('_rtt.csv'))) {
    for (const line of fs.readFileSync(path.join(dir, file), 'utf8').split('\n').slice(1)) {
      const [at, ms] = line.split(';');
      if (!at || !ms) continue;
      answeredAtMs.push(Number(at));
      responseMs.push(Number(ms));
    }
  }
  const stats = new Map<string, string>();
  if (fs.existsSync(statFile)) {
    const lines = fs.readFileSync(statFile, 'utf8').trim().split('\n');
    const names = lines[0]?.split(';') ?? [];
    const values = lines.at(-1)?.split(';') ?? [];
    for (const [i, name] of names.entries()) stats.set(name, values[i] ?? '');
  }
  return {
    code: exit.code,
    output: child.output(),
    responseMs,
    answeredAtMs,
    stats,
    wallMs: performance.now() - started,
  };
}

/** SIPp's built-in uas in the background: the baseline's callee. */
async function startSippUas(scope: Scope): Promise<{ port: number; child: Child }> {
  const dir = tempDir(scope, 'sipp-uas');
  const port = await freeUdpPort();
  const child = spawnChild(
    scope,
    'sipp uas',
    SIPP,
    ['-sn', 'uas', '-i', HOST, '-p', String(port), '-mp', String(await freeUdpPort()), '-nostdin'],
    { cwd: dir, env: process.env },
  );
  await sleep(500);
  if (child.hasExited()) throw new Error(`SIPp uas did not start:\n${child.output()}`);
  return { port, child };
}

async function uacArgs(
  scenario: string,
  target: number,
  probe: Probe,
  options: { calls: number; limit: number; pauseMs?: number },
): Promise<string[]> {
  return [
    ...['-sf', scenario, `${HOST}:${target}`, '-i', HOST],
    ...['-p', String(await freeUdpPort()), '-mp', String(await freeUdpPort())],
    ...['-key', 'probe_host', HOST, '-key', 'probe_port', String(probe.port)],
    ...['-r', String(RATE), '-l', String(options.limit), '-m', String(options.calls)],
    ...(options.pauseMs !== undefined ? ['-d', String(options.pauseMs)] : []),
  ];
}

/** The either-BYE scenario with SIPp's wait for our BYE written in. */
function eitherByeScenario(scope: Scope, byeTimeoutMs: number): string {
  const file = path.join(tempDir(scope, 'scenario'), 'either-bye.xml');
  fs.writeFileSync(
    file,
    fs.readFileSync(EITHER_BYE_SCENARIO, 'utf8').replaceAll('__BYE_TIMEOUT_MS__', String(byeTimeoutMs)),
  );
  return file;
}

// --- The process under test -------------------------------------------------------------------

/**
 * A fresh worker (lib/sip-worker.ts: stack, media worker and adapter as sip-runtime builds them,
 * minus screening) in this process: `hangupAfterMs(n)` for the n-th call says how long we play
 * the tone before hanging up ourselves, or null to play until the far end hangs up.
 */
async function startUnderTest(
  scope: Scope,
  vad: Vad,
  hangupAfterMs: (index: number) => number | null,
): Promise<SipWorker> {
  // Even ports only, one per leg: a range of 1,000 holds 500 legs.
  const rtpBase = 20_000 + 2 * Math.floor(Math.random() * 10_000);
  return startSipWorker(scope, {
    vad,
    host: HOST,
    sipPort: 0,
    rtpPortMin: rtpBase,
    rtpPortMax: rtpBase + 999,
    recordingDir: tempDir(scope, 'sip-recordings'),
    t1: T1_MS,
    hangupAfterMs,
  });
}

async function waitUntil(check: () => boolean | Promise<boolean>, timeoutMs: number, everyMs = 100) {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    if (await check()) return true;
    if (performance.now() > deadline) return false;
    await sleep(everyMs);
  }
}

// --- answer: INVITE → 200 ----------------------------------------------------------------------

async function answerBench(vad: Vad, probe: Probe): Promise<BudgetResult[]> {
  return withScope(async (scope) => {
    // A call lasts what keeps CALLS_UP up at RATE: 200 / 30 per second ≈ 6.7 s.
    const pauseMs = Math.round((CALLS_UP / RATE) * 1000);
    const limitMs = (ANSWER_CALLS / RATE) * 1000 + pauseMs + 60_000;

    const uas = await startSippUas(scope);
    const base = await runSipp(
      scope,
      'baseline',
      await uacArgs(MEDIA_SCENARIO, uas.port, probe, { calls: ANSWER_CALLS, limit: CALLS_UP, pauseMs }),
      limitMs,
    );
    await uas.child.stop(2000);

    const ours = await startUnderTest(scope, vad, () => null);
    const elu0 = performance.eventLoopUtilization();
    const run = await runSipp(
      scope,
      'answer',
      await uacArgs(MEDIA_SCENARIO, ours.sipPort, probe, { calls: ANSWER_CALLS, limit: CALLS_UP, pauseMs }),
      limitMs,
    );
    const mainElu = performance.eventLoopUtilization(elu0).utilization;
    const settled = await waitUntil(
      async () => ours.adapter.activeLegs === 0 && (await ours.engine.stats()).portsInUse === 0,
      10_000,
    );

    const rows = [base, run].map((r, i) => [
      i === 0 ? 'SIPp uas (baseline)' : 'callpilot sip adapter',
      fmtInt(statNumber(r, 'SuccessfulCall(C)')),
      fmtInt(statNumber(r, 'FailedCall(C)')),
      answerRate(r).toFixed(1),
      fmtMs(percentile(r.responseMs, 50)),
      fmtMs(percentile(r.responseMs, 95)),
      fmtMs(percentile(r.responseMs, 99)),
      fmtMs(max(r.responseMs)),
      fmtInt(statNumber(r, 'Retransmissions(C)')),
    ]);
    console.log(
      table(['callee', 'calls ok', 'failed', 'calls/s', 'p50', 'p95', 'p99', 'max', 'retrans'], rows),
    );
    const p95 = percentile(run.responseMs, 95);
    const baseP95 = percentile(base.responseMs, 95);
    console.log(
      `  peak legs up ${ours.peakLegs}; main thread busy ${(mainElu * 100).toFixed(0)}% of the run; ` +
        `p95 ${fmtRatio(p95 / Math.max(1, baseP95))} SIPp uas's`,
    );
    if (ours.failures.length > 0) console.log(`  errors: ${ours.failures.slice(0, 5).join('; ')}`);
    const ok =
      run.code === 0 &&
      statNumber(run, 'SuccessfulCall(C)') === ANSWER_CALLS &&
      run.responseMs.length === ANSWER_CALLS;
    if (!ok) console.log(`  SIPp exit ${run.code}:\n${run.output.slice(-1500)}`);
    return [
      budget(
        'sip: INVITE → 200 p95 at 30 calls/s, 200 up',
        ok && p95 <= P95_BUDGET_MS && ours.peakLegs >= CALLS_UP * 0.95,
        `p95 ${fmtMs(p95)} (budget ${P95_BUDGET_MS} ms; SIPp uas ${fmtMs(baseP95)}) over ` +
          `${run.responseMs.length} calls, ${statNumber(run, 'FailedCall(C)')} failed, peak ${ours.peakLegs} up` +
          (settled ? '' : '; legs or RTP ports still open 10 s after the run'),
      ),
    ];
  });
}

// --- pacing and legs: 200 legs for SIP_BENCH_MINUTES ----------------------------------------

/** The baseline sender: what a setInterval on a busy main thread sends, to the same probe. */
async function startNaiveSender(probePort: number) {
  const socket = dgram.createSocket('udp4');
  await new Promise<void>((resolve) => socket.bind(0, HOST, () => resolve()));
  const packet = Buffer.alloc(12 + 160, 0xd5);
  packet[0] = 0x80;
  packet[1] = 8;
  packet.writeUInt32BE(0x5eed, 8);
  let seq = 0;
  let ts = 0;
  let sent = 0;
  const started = performance.now();
  const timer = setInterval(() => {
    packet.writeUInt16BE(seq, 2);
    packet.writeUInt32BE(ts, 4);
    socket.send(packet, probePort, HOST);
    seq = (seq + 1) & 0xffff;
    ts = (ts + 160) >>> 0;
    sent++;
  }, 20);
  return {
    port: socket.address().port,
    stop() {
      clearInterval(timer);
      socket.close();
      // Ticks a 20 ms clock had by now that setInterval never ran: each is 20 ms of audio late for good.
      return { sent, behind: Math.floor((performance.now() - started) / 20) - sent };
    },
  };
}

async function pacingBench(vad: Vad, probe: Probe): Promise<BudgetResult[]> {
  return withScope(async (scope) => {
    const windowMs = MINUTES * 60_000;
    const rssBefore = process.memoryUsage.rss();
    const ours = await startUnderTest(scope, vad, () => null);
    const idle = await ours.engine.stats();
    // SIPp waits for our BYE (sent when the window is over); its own BYE only if we never send one.
    const scenario = eitherByeScenario(scope, windowMs + 180_000);
    const sipp = runSipp(
      scope,
      'pacing',
      await uacArgs(scenario, ours.sipPort, probe, { calls: LEGS, limit: LEGS }),
      windowMs + 240_000,
    );
    const up = await waitUntil(() => ours.adapter.activeLegs >= LEGS, 60_000 + (LEGS / RATE) * 2000);
    if (!up) {
      await ours.adapter.close();
      const run = await sipp;
      throw new Error(
        `only ${ours.adapter.activeLegs} of ${LEGS} legs came up (${ours.failures.join('; ')})\n${run.output.slice(-1500)}`,
      );
    }
    // Let every jitter buffer fill and the probe learn every stream before measuring.
    await sleep(2000);
    const drops0 = udpReceiveBufferErrors();
    const naive = await startNaiveSender(probe.port);
    probe.mark();
    const s0 = await ours.engine.stats();
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    let rssPeak = 0;
    // Each poll's figure covers the time since the previous one (the first since s0).
    const busy: number[] = [];
    let minLegs = ours.adapter.activeLegs;
    const minutes = Math.round(windowMs / 60_000);
    // recentLatenessMaxMs covers the time since the previous stats() call: one poll, not a minute.
    let minuteMax = 0;
    for (let elapsed = 0; elapsed < windowMs; ) {
      const step = Math.min(5000, windowMs - elapsed);
      await sleep(step);
      elapsed = performance.now() - t0;
      const s = await ours.engine.stats();
      rssPeak = Math.max(rssPeak, s.rssBytes);
      busy.push(s.recentEventLoopUtilization);
      minLegs = Math.min(minLegs, ours.adapter.activeLegs);
      minuteMax = Math.max(minuteMax, s.recentLatenessMaxMs);
      if (minutes > 1 && Math.floor(elapsed / 60_000) !== Math.floor((elapsed - step) / 60_000)) {
        console.log(
          `  ${Math.floor(elapsed / 60_000)}/${minutes} min: ${ours.adapter.activeLegs} legs, ` +
            `worst send lateness this minute ${fmtMs1(minuteMax)}`,
        );
        minuteMax = 0;
      }
    }
    const s1 = await ours.engine.stats();
    const cpu = process.cpuUsage(cpu0);
    const report = await probe.report();
    const windowReal = performance.now() - t0;
    const naiveResult = naive.stop();
    const drops1 = udpReceiveBufferErrors();

    await ours.adapter.close();
    const run = await sipp;

    const streams = report.streams.filter((s) => s.port !== naive.port);
    const baseline = report.streams.find((s) => s.port === naive.port);
    const lostTicks = sum(streams.map((s) => s.missing + s.timestampJumps));
    const jitter = streams.flatMap((s) => s.jitterSamples);
    const jitterP99 = percentile(jitter, 99);
    const baseJitterP99 = percentile(baseline?.jitterSamples ?? [], 99);
    const expectedPackets = Math.floor(windowReal / 20) * streams.length;
    const received = sum(streams.map((s) => s.packets));
    const kernelDrops = drops0 !== null && drops1 !== null ? drops1 - drops0 : null;

    console.log(
      table(
        ['sender', 'streams', 'packets', 'lost ticks', 'jitter p50', 'p99', 'max', 'worst gap'],
        [
          [
            'media worker (20 ms deadlines)',
            fmtInt(streams.length),
            fmtInt(received),
            fmtInt(lostTicks),
            fmtMs1(percentile(jitter, 50)),
            fmtMs1(jitterP99),
            fmtMs1(max([0, ...jitter])),
            fmtMs1(max([0, ...streams.map((s) => s.maxGapMs)])),
          ],
          [
            'setInterval(20) on main (baseline)',
            baseline ? '1' : '0',
            fmtInt(baseline?.packets ?? 0),
            fmtInt(naiveResult.behind),
            fmtMs1(percentile(baseline?.jitterSamples ?? [], 50)),
            fmtMs1(baseJitterP99),
            fmtMs1(max([0, ...(baseline?.jitterSamples ?? [])])),
            fmtMs1(baseline?.maxGapMs ?? 0),
          ],
        ],
      ),
    );
    const lateTicks = s1.lateTicks - s0.lateTicks;
    console.log(
      `  window ${(windowReal / 1000).toFixed(0)} s; ${fmtInt(received)} of ~${fmtInt(expectedPackets)} packets ` +
        `at the probe; send lateness mean ${fmtMs1(s1.latenessMeanMs)}, p99 ${fmtMs1(s1.latenessP99Ms)}, ` +
        `max ${fmtMs1(s1.latenessMaxMs)}; ${fmtInt(lateTicks)} ticks a period or more late (sent in a burst)` +
        (kernelDrops !== null ? `; kernel UDP buffer drops (machine-wide) ${fmtInt(kernelDrops)}` : ''),
    );

    // legs: one worker thread's CPU, against the probe's bare I/O for the same packets.
    const workerCpu =
      s1.workerCpuMs !== null && s0.workerCpuMs !== null
        ? (s1.workerCpuMs - s0.workerCpuMs) / windowReal
        : null;
    const workerWait =
      s1.workerWaitMs !== null && s0.workerWaitMs !== null
        ? (s1.workerWaitMs - s0.workerWaitMs) / windowReal
        : null;
    const processCpu = (cpu.user + cpu.system) / 1000 / windowReal;
    const probeCpu = report.cpuMs / report.windowMs;
    const rssPerLeg = (s1.rssBytes - idle.rssBytes) / LEGS;
    console.log(
      table(
        ['', 'CPU', 'per leg'],
        [
          [
            `media worker thread, ${minLegs} legs`,
            workerCpu !== null ? fmtCores(workerCpu) : 'n/a',
            workerCpu !== null ? `${((workerCpu / LEGS) * 1000).toFixed(2)} ms/s` : 'n/a',
          ],
          [
            'whole process (SIP, VAD, worker)',
            fmtCores(processCpu),
            `${((processCpu / LEGS) * 1000).toFixed(2)} ms/s`,
          ],
          [
            'probe, bare UDP I/O (baseline)',
            fmtCores(probeCpu),
            `${((probeCpu / LEGS) * 1000).toFixed(2)} ms/s`,
          ],
        ],
      ),
    );
    console.log(
      `  tick work mean ${fmtMs1(s1.tickWorkMeanMs)} of 20 ms, max ${fmtMs1(s1.tickWorkMaxMs)}; worker busy ` +
        `${((sum(busy) / busy.length) * 100).toFixed(0)}% of the time (event loop)` +
        (workerWait !== null ? `, waited for a core ${(workerWait * 1000).toFixed(0)} ms/s` : '') +
        `; RSS ${fmtMiB(s1.rssBytes)} (peak ${fmtMiB(rssPeak)}, ${fmtMiB(rssBefore)} before the worker, ` +
        `${fmtMiB(idle.rssBytes)} idle), ${(rssPerLeg / 1024).toFixed(0)} KiB per leg`,
    );
    if (ours.failures.length > 0) console.log(`  errors: ${ours.failures.slice(0, 5).join('; ')}`);
    if (run.code !== 0) console.log(`  SIPp exit ${run.code}:\n${run.output.slice(-1500)}`);

    const minutesLabel = `${MINUTES} min`;
    // What a busy machine did to the worker, so a timing failure says whether the engine or the host was slow.
    const host =
      workerWait !== null
        ? `; the worker waited ${(workerWait * 1000).toFixed(0)} ms/s for a core (load ${os.loadavg()[0]?.toFixed(1)} on ${os.availableParallelism()} cores)`
        : '';
    return [
      budget(
        `sip: 0 lost 20 ms ticks over ${minutesLabel}, ${streams.length} streams`,
        lostTicks === 0 && streams.length >= LEGS,
        `${fmtInt(lostTicks)} lost (setInterval baseline: ${fmtInt(naiveResult.behind)} ticks behind)` +
          (kernelDrops ? `; the kernel dropped ${fmtInt(kernelDrops)} datagrams machine-wide` : ''),
      ),
      budget(
        'sip: send lateness p99',
        s1.latenessP99Ms <= LATENESS_P99_BUDGET_MS,
        `${fmtMs1(s1.latenessP99Ms)} since the worker started (budget ${LATENESS_P99_BUDGET_MS} ms), ` +
          `max ${fmtMs1(s1.latenessMaxMs)}${host}`,
      ),
      budget(
        'sip: receiver interarrival jitter p99',
        jitterP99 <= JITTER_BUDGET_MS,
        `${fmtMs1(jitterP99)} (budget ${JITTER_BUDGET_MS} ms; setInterval baseline ${fmtMs1(baseJitterP99)}, ` +
          `${fmtRatio(jitterP99 / Math.max(0.01, baseJitterP99))})${host}`,
      ),
      budget(
        `sip: ${LEGS} media legs on one worker`,
        minLegs >= LEGS && workerCpu !== null && workerCpu <= 1 && run.code === 0,
        `${minLegs} legs for ${minutesLabel}, worker ${workerCpu !== null ? fmtCores(workerCpu) : 'CPU unknown'} ` +
          `(${fmtRatio((workerCpu ?? Number.NaN) / Math.max(0.001, probeCpu))} bare I/O), RSS ${fmtMiB(s1.rssBytes)}`,
      ),
    ];
  });
}

// --- 600 calls in a row, then nothing left -----------------------------------------------------

async function rowBench(vad: Vad, probe: Probe): Promise<BudgetResult[]> {
  return withScope(async (scope) => {
    // Every other call we hang up after half a second of tone; the rest SIPp hangs up after 4 s.
    const ours = await startUnderTest(scope, vad, (index) => (index % 2 === 0 ? 500 : null));
    const run = await runSipp(
      scope,
      'row',
      await uacArgs(eitherByeScenario(scope, 4000), ours.sipPort, probe, {
        calls: ROW_CALLS,
        limit: CALLS_UP,
      }),
      (ROW_CALLS / RATE) * 1000 + 60_000,
    );
    const ended = performance.now();
    const leftovers = async () => {
      const stack = ours.stack.stats();
      const media = await ours.engine.stats();
      return {
        transactions: stack.transactions,
        dialogs: stack.sessions,
        ringing: stack.ringing,
        retransmits: stack.retransmits,
        legs: ours.adapter.activeLegs,
        mediaSessions: media.sessions,
        ports: media.portsInUse,
      };
    };
    // RFC 3261 keeps a transaction up to 64·T1 after its last message (timers J and L): wait that out.
    const boundMs = 64 * T1_MS;
    let left = await leftovers();
    const drained = await waitUntil(
      async () => {
        left = await leftovers();
        return Object.values(left).every((v) => v === 0);
      },
      boundMs + 10_000,
      250,
    );
    const drainMs = performance.now() - ended;
    const transport = ours.stack.transport.stats();
    const ok = statNumber(run, 'SuccessfulCall(C)');
    const failed = statNumber(run, 'FailedCall(C)');
    console.log(
      `  ${fmtInt(ok)} calls ok, ${fmtInt(failed)} failed (SIPp exit ${run.code}) in ${(run.wallMs / 1000).toFixed(1)} s; ` +
        `${ours.endedByUs} hung up by us, ${ours.endedByFarEnd} by SIPp; SIP messages in ${fmtInt(transport.received)}, ` +
        `out ${fmtInt(transport.sent)}, dropped ${transport.dropped}, send errors ${transport.sendErrors}`,
    );
    console.log(
      `  afterwards: ${Object.entries(left)
        .map(([k, v]) => `${k} ${v}`)
        .join(', ')} ${drained ? 'after' : 'still, after'} ${fmtMs(drainMs)} ` +
        `(${fmtRatio(drainMs / boundMs)} of 64·T1 = ${fmtMs(boundMs)})`,
    );
    if (ours.failures.length > 0) console.log(`  errors: ${ours.failures.slice(0, 5).join('; ')}`);
    if (run.code !== 0) console.log(`  SIPp output:\n${run.output.slice(-1500)}`);
    return [
      budget(
        `sip: ${ROW_CALLS} calls in a row, nothing leaked`,
        run.code === 0 && ok === ROW_CALLS && failed === 0 && ours.failures.length === 0 && drained,
        `${fmtInt(ok)} ok, ${fmtInt(failed)} failed; ` +
          (drained
            ? `0 transactions, dialogs, legs and ports ${fmtMs(drainMs)} after the last call`
            : `left: ${JSON.stringify(left)}`),
      ),
    ];
  });
}

export async function sipBenchmark(): Promise<BudgetResult[]> {
  const unknown = [...PARTS].filter((p) => !['answer', 'pacing', 'row', 'failover'].includes(p));
  if (unknown.length > 0)
    throw new Error(`SIP_BENCH_PARTS: unknown ${unknown.join(', ')} (answer, pacing, row, failover)`);
  const inProcess = ['answer', 'pacing', 'row'].some((p) => PARTS.has(p));
  // Without SIPp nothing here can run; only the failover part, which needs Kamailio too, says SKIP.
  if (inProcess && !fs.existsSync(SIPP)) {
    throw new Error(`${SIPP} is missing: install Debian's sip-tester (.ci/run does) to run the SIP bench`);
  }
  if (!(MINUTES > 0) || !(LEGS > 0)) throw new Error('SIP_BENCH_MINUTES and SIP_BENCH_LEGS must be positive');
  console.log(
    `  ${os.availableParallelism()} cores; pacing window ${MINUTES} min (SIP_BENCH_MINUTES), ${LEGS} legs (SIP_BENCH_LEGS)`,
  );
  const results: BudgetResult[] = [];
  if (inProcess) {
    await withScope(async (scope) => {
      const vad = await loadVad();
      const probe = await startProbe(scope);
      if (PARTS.has('answer')) {
        console.log('  -- answer: INVITE → 200, SIPp uac at 30 calls/s, 200 calls up');
        results.push(...(await answerBench(vad, probe)));
      }
      if (PARTS.has('pacing')) {
        console.log(`  -- pacing and legs: ${LEGS} legs for ${MINUTES} min`);
        results.push(...(await pacingBench(vad, probe)));
      }
      if (PARTS.has('row')) {
        console.log(`  -- in a row: ${ROW_CALLS} calls, then leak checks`);
        results.push(...(await rowBench(vad, probe)));
      }
    });
  }
  if (PARTS.has('failover')) {
    console.log(
      `  -- failover: Kamailio in front of two worker processes, ${FAILOVER_RATE} calls/s for ` +
        `${FAILOVER_SECONDS} s (SIP_BENCH_FAILOVER_SECONDS); once as a baseline, once with kill -9 of one at mid-run`,
    );
    results.push(...(await failoverBench(fs.existsSync(SIPP) ? SIPP : null)));
  }
  return results;
}
