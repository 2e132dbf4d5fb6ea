// `npm run bench [-- name...]`: builds what is stale, runs the selected benchmarks one after
// another (never in parallel: they would compete for the same cores), each in a process of its
// own, and exits non-zero when a budget fails or a benchmark cannot run. A process per benchmark
// keeps one benchmark's heap, workers and timers out of the next one's figures (the engine's RSS
// budget once read the knowledge benchmark's index as its own).
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { brainBenchmark } from './src/brain';
import { bundleBenchmark } from './src/bundle';
import { callsBenchmark, engineBenchmark } from './src/calls';
import { dialerBenchmark } from './src/dialer';
import { dialerRealBenchmark } from './src/dialer-real';
import { flowBenchmark } from './src/flow';
import { flowCallsBenchmark } from './src/flow-calls';
import { flowEditorBenchmark } from './src/flow-editor';
import { httpBenchmark } from './src/http';
import { inboundBenchmark } from './src/inbound';
import { knowledgeBenchmark } from './src/knowledge';
import { knowledgeAnswersBenchmark } from './src/knowledge-answers';
import { atEmergency, emergencyCleanup } from './src/lib/proc';
import type { BudgetResult } from './src/lib/report';
import { ensureBuilt } from './src/lib/server';
import { opendockBenchmark } from './src/opendock';
import { reportsBenchmark } from './src/reports';
import { sipBenchmark } from './src/sip';
import { smsBatchBenchmark } from './src/sms-batch';
import { smsRateBenchmark } from './src/sms-rate';
import { smsRecordsBenchmark } from './src/sms-records';
import { soakBenchmark } from './src/soak';
import { speechBenchmark } from './src/speech';
import { startupBenchmark } from './src/startup';
import { webhooksBenchmark } from './src/webhooks';

interface Benchmark {
  name: string;
  about: string;
  run: () => Promise<BudgetResult[]>;
}

const benchmarks: Benchmark[] = [
  { name: 'http', about: 'req/s and p99 of the real server against bare node:http', run: httpBenchmark },
  { name: 'bundle', about: 'gzip bytes of JS+CSS loaded by /login and /dashboard', run: bundleBenchmark },
  { name: 'startup', about: 'time to first /healthz 200, first start and restart', run: startupBenchmark },
  {
    name: 'knowledge',
    about: 'retrieval p95 over 100,000 segments and recall@3 on a Chinese FAQ',
    run: knowledgeBenchmark,
  },
  {
    name: 'knowledge-answers',
    about:
      'spoken-question answer quality: recall@3, wrong answers and unanswerables answered, on two domains',
    run: () => knowledgeAnswersBenchmark(),
  },
  {
    name: 'brain',
    about: 'script-brain reply p99 (retrieval excluded) against a substring scan',
    run: brainBenchmark,
  },
  {
    name: 'engine',
    about: 'per-turn session overhead p99 and peak RSS with 1,000 concurrent simulated calls',
    run: engineBenchmark,
  },
  {
    name: 'calls',
    about: 'call list p95 over 1,000,000 calls on PostgreSQL, and export memory while streaming',
    run: callsBenchmark,
  },
  {
    name: 'reports',
    about:
      'every report over 30 days p95 on PostgreSQL with 1,000,000 calls and on PGlite with 100,000, the dashboard, and the rollup build time',
    run: reportsBenchmark,
  },
  {
    name: 'opendock',
    about:
      'GET /opendock/v1/calls req/s with an API key on PostgreSQL, against bare node:http running the same query',
    run: opendockBenchmark,
  },
  {
    name: 'dialer',
    about:
      'contacts/s of the dialer, 10,000 contacts at concurrency 200, against concurrency ÷ mean call time',
    run: dialerBenchmark,
  },
  {
    name: 'dialer-real',
    about:
      'calls/s of the real path (placeCall: records, analysis, recordings) on PostgreSQL in real time with SIM_TIME_SCALE, 4,000 contacts at concurrency 200, against concurrency ÷ mean call time',
    run: dialerRealBenchmark,
  },
  {
    name: 'inbound',
    about:
      'per-turn overhead p99 with 500 concurrent inbound calls, and no call admitted beyond concurrentCallin',
    run: inboundBenchmark,
  },
  {
    name: 'flow',
    about:
      'IVR interpreter overhead per node p99 over a 30-node flow, 100 calls in flight, against 30 plain prompts',
    run: flowBenchmark,
  },
  {
    name: 'flow-editor',
    about: 'a 200-node call flow opens and becomes editable in Chromium, against a 10-node flow',
    run: flowEditorBenchmark,
  },
  {
    name: 'flow-calls',
    about:
      '500 concurrent inbound calls answered by a call flow (menu, HTTP lookup) on one worker, 0 errors, RSS, against 500 answered by an assistant',
    run: flowCallsBenchmark,
  },
  {
    name: 'sip',
    about:
      'real SIP on loopback against SIPp: INVITE→200 p95 at 30 calls/s with 200 up, RTP pacing and 200 media legs on one worker, 600 calls without leaks, kill -9 of one of two workers behind Kamailio',
    run: sipBenchmark,
  },
  {
    name: 'speech',
    about:
      'real SIP calls through the assistant with fake FunASR, LLM and CosyVoice at fixed delays: reply start p95 over 100 calls, barge-in, providers failing mid-stream',
    run: speechBenchmark,
  },
  {
    name: 'sms-batch',
    about:
      'a 100,000-row SMS batch uploaded and queued on PGlite and PostgreSQL, against the task contact import of the same file',
    run: smsBatchBenchmark,
  },
  {
    name: 'sms-records',
    about:
      'SMS record list p95 over 1,000,000 records on PostgreSQL (unfiltered, by phone, status + week, template), against /api/user/current',
    run: smsRecordsBenchmark,
  },
  {
    name: 'webhooks',
    about:
      'webhook delivery p95 at 1,000 events/s for 30 s into a local receiver, 0 lost and 0 duplicated across a dispatcher restart, against the receiver hit directly',
    run: webhooksBenchmark,
  },
  {
    name: 'sms-rate',
    about:
      "the SMS sending worker through the Aliyun client never exceeds the provider's rate and uses most of it, against the unpaced machine",
    run: smsRateBenchmark,
  },
  {
    name: 'soak',
    about:
      'a task at concurrency 200 on the simulated carrier for SOAK_MINUTES (default 60): server RSS trend and event-loop delay p99, sampled every 10 s',
    run: soakBenchmark,
  },
];

// A child server left running would hold its port and DATA_DIR; kill it whatever ends the runner.
process.on('exit', emergencyCleanup);
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  process.on(signal, () => {
    console.error(`\n${signal}: stopping child processes`);
    emergencyCleanup();
    process.exit(130);
  });
}

function usage(): string {
  const list = benchmarks.map((b) => `  ${b.name.padEnd(8)} ${b.about}`).join('\n');
  return `usage: npm run bench [-- <name>...]\n\nbenchmarks (all but soak when none is named):\n${list}`;
}

/** Where a child writes its verdicts, and the name of the benchmark it is to run. */
const CHILD_VERDICTS = 'BENCH_CHILD_VERDICTS';
const CHILD_NAME = 'BENCH_CHILD';

/** In the child: runs one benchmark and hands its verdicts to the parent through a file. */
async function runChild(name: string, verdictsFile: string): Promise<number> {
  const b = benchmarks.find((x) => x.name === name);
  if (!b) throw new Error(`unknown benchmark ${name}`);
  const verdicts = await b.run();
  fs.writeFileSync(verdictsFile, JSON.stringify(verdicts));
  return 0;
}

/** Runs one benchmark in a fresh `tsx` process; its output goes straight to this terminal. */
function runInChild(
  name: string,
  verdictsFile: string,
): Promise<{ code: number | null; signal: string | null }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...process.execArgv, process.argv[1] as string], {
      stdio: 'inherit',
      env: { ...process.env, [CHILD_NAME]: name, [CHILD_VERDICTS]: verdictsFile },
    });
    // SIGTERM, not SIGKILL: the child then stops the servers it started (its own emergencyCleanup).
    const forget = atEmergency(() => child.kill('SIGTERM'));
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      forget();
      resolve({ code, signal });
    });
  });
}

async function main(): Promise<number> {
  const childName = process.env[CHILD_NAME];
  const childVerdicts = process.env[CHILD_VERDICTS];
  if (childName && childVerdicts) return runChild(childName, childVerdicts);

  const args = process.argv.slice(2);
  if (args.includes('--help') || args.includes('-h') || args.includes('--list')) {
    console.log(usage());
    return 0;
  }
  const unknown = args.filter((a) => !benchmarks.some((b) => b.name === a));
  if (unknown.length > 0) {
    console.error(`unknown benchmark: ${unknown.join(', ')}\n\n${usage()}`);
    return 2;
  }
  // The hour-long soak runs only when named.
  const selected =
    args.length === 0
      ? benchmarks.filter((b) => b.name !== 'soak')
      : benchmarks.filter((b) => args.includes(b.name));

  ensureBuilt();

  const verdicts: BudgetResult[] = [];
  const crashed: string[] = [];
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-verdicts-'));
  try {
    for (const b of selected) {
      console.log(`\n== ${b.name}: ${b.about}`);
      // Timings are only comparable on an otherwise idle machine; show how busy it was.
      const [load1 = 0] = os.loadavg();
      console.log(`  load average ${load1.toFixed(2)} on ${os.availableParallelism()} cores at start`);
      const started = performance.now();
      const file = path.join(dir, `${b.name}.json`);
      const { code, signal } = await runInChild(b.name, file);
      if (code === 0 && fs.existsSync(file)) {
        verdicts.push(...(JSON.parse(fs.readFileSync(file, 'utf8')) as BudgetResult[]));
      } else {
        // One broken benchmark must not hide the others' figures.
        crashed.push(b.name);
        console.log(`  ERROR ${b.name} exited with ${signal ?? `code ${code}`}`);
      }
      console.log(`  (${b.name} took ${((performance.now() - started) / 1000).toFixed(1)} s)`);
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }

  console.log('\n== summary');
  for (const v of verdicts)
    console.log(`  ${v.skipped ? 'SKIP' : v.pass ? 'PASS' : 'FAIL'}  ${v.name}: ${v.detail}`);
  for (const name of crashed) console.log(`  ERROR ${name}: did not complete`);
  const failed = verdicts.filter((v) => !v.pass).length + crashed.length;
  const skips = verdicts.filter((v) => v.skipped).length;
  const skipNote = skips > 0 ? ` (${skips} skipped, not measured)` : '';
  console.log(failed === 0 ? `  all budgets met${skipNote}` : `  ${failed} failure(s)${skipNote}`);
  return failed === 0 ? 0 : 1;
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (err) => {
    console.error(err instanceof Error ? (err.stack ?? err.message) : err);
    process.exitCode = 1;
  },
);
