// Issue #15 budget: 500 concurrent inbound calls answered by a call flow on the simulated carrier
// on one worker, with 0 errors and RSS reported. The engine's whole inbound path (answerCall: the
// number's route, the flow's published version, admission under concurrentCallin, the interpreter
// over the simulated leg, every step and turn written, the end, the analysis) with the real
// CallRepository and ports on a fresh in-memory PGlite and a virtual clock. A realistic flow:
// greeting, a business-hours condition, a menu, an HTTP lookup against a local server, a prompt
// with the result, hang-up. Baseline in the same run: 500 concurrent inbound calls answered by an
// assistant (the same path up to the session), so the ratio says what a flow costs against it.
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import { type AssistantConfig, assistantConfig, type EndReason, type FlowGraph } from '@callpilot/contracts';
import { PGlite } from '@electric-sql/pglite';
import { openDatabase } from '../../apps/server/src/db/client';
import {
  assistants,
  assistantVersions,
  callFlows,
  callFlowVersions,
  projectLimits,
  projectNumbers,
  projects,
} from '../../apps/server/src/db/schema';
import { answerCall } from '../../apps/server/src/engine/call/answer-call';
import type { CallDeps, CallOutcome } from '../../apps/server/src/engine/call/run-call';
import { VirtualClock } from '../../apps/server/src/engine/clock';
import { createFlowHttpClient } from '../../apps/server/src/engine/flow/http-client';
import { buildGraph } from '../../apps/server/src/engine/flow/testing/flows';
import { LocalRecordingStore } from '../../apps/server/src/engine/recording/store';
import { createSimCarrier } from '../../apps/server/src/engine/telephony/sim/sim-carrier';
import { ASSISTANT_TEMPLATES } from '../../apps/server/src/modules/assistants/assistants.templates';
import { CallEventHub } from '../../apps/server/src/modules/calls/call-events';
import { CallRepository } from '../../apps/server/src/modules/calls/call-repository';
import { createCallPorts } from '../../apps/server/src/runtime/call-ports';
import { LiveCalls } from '../../apps/server/src/runtime/live-calls';
import { type BudgetResult, budget, fmtInt, fmtMs, fmtRatio, table } from './lib/report';

const CONCURRENT = Number(process.env.BENCH_FLOW_CALLS ?? 500);
const WARMUP_CALLS = 20;
const WALL_LIMIT_MS = 5 * 60_000;
const FLOW_NUMBER = '02160883000';
const ASSISTANT_NUMBER = '02160883001';
/** Monday 10:00 China time: the business-hours condition is open. */
const START_AT = Date.parse('2026-03-02T10:00:00+08:00');

const fmtMiB = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
const fmtS = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

/** 星河宽带客服热线, as a business would draw it (every exit connected, so it would publish). */
function hotline(billUrl: string): FlowGraph {
  return buildGraph(
    [
      ['start', 'start'],
      ['greet', 'play', { text: '您好，欢迎致电星河宽带客服热线。' }, '欢迎语'],
      [
        'hours',
        'condition',
        {
          branches: [
            {
              id: 'open',
              name: '营业时间',
              rules: [
                {
                  kind: 'business_hours',
                  windows: [{ days: [1, 2, 3, 4, 5, 6], start: '08:00', end: '20:00' }],
                },
              ],
            },
          ],
        },
        '营业时间判断',
      ],
      [
        'menu',
        'menu',
        {
          prompt: '查询账单请按1，报修请按2，人工服务请按0。',
          options: [
            { key: '1', label: '账单' },
            { key: '2', label: '报修' },
            { key: '0', label: '人工' },
          ],
        },
        '主菜单',
      ],
      [
        'lookup',
        'http',
        {
          url: `${billUrl}?phone={{caller}}`,
          mappings: [
            { variable: 'amount', path: 'data.amount' },
            { variable: 'due', path: 'data.dueDate' },
          ],
          defaultResult: '{"data":{"amount":"--","dueDate":"--"}}',
        },
        '账单查询',
      ],
      ['bill', 'play', { text: '您本月账单 {{amount}} 元，请于 {{due}} 前缴纳。' }, '播报账单'],
      ['sorry', 'play', { text: '抱歉，暂时无法查询账单。' }, '查询失败'],
      ['other', 'play', { text: '请稍后再拨。' }, '其他业务'],
      ['closed', 'play', { text: '现在是非工作时间。' }, '非工作时间'],
      ['bye', 'hangup', { text: '感谢您的来电，再见。', reason: '查询结束' }, '结束'],
    ],
    [
      ['start', 'next', 'greet'],
      ['greet', 'next', 'hours'],
      ['hours', 'branch:open', 'menu'],
      ['hours', 'else', 'closed'],
      ['menu', 'key:1', 'lookup'],
      ['menu', 'key:2', 'other'],
      ['menu', 'key:0', 'other'],
      ['menu', 'invalid', 'bye'],
      ['menu', 'timeout', 'bye'],
      ['lookup', 'success', 'bill'],
      ['lookup', 'failure', 'sorry'],
      ['bill', 'next', 'bye'],
      ['sorry', 'next', 'bye'],
      ['other', 'next', 'bye'],
      ['closed', 'next', 'bye'],
    ],
  );
}

/** The business's own system the HTTP node asks: a bill per caller, as JSON. */
async function billServer() {
  let requests = 0;
  const server = http.createServer((req, res) => {
    requests++;
    const phone = new URL(req.url ?? '/', 'http://x').searchParams.get('phone') ?? '';
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ code: 0, data: { amount: `1${phone.slice(-2)}.00`, dueDate: '2026-03-15' } }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/bill`,
    requests: () => requests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

interface Run {
  label: string;
  offered: number;
  endReasons: Map<EndReason, number>;
  wallMs: number;
  simulatedMs: number;
  rssBefore: number;
  peakRss: number;
  rssAfter: number;
}

export async function flowCallsBenchmark(): Promise<BudgetResult[]> {
  const rssAtStart = process.memoryUsage().rss;
  const client = await PGlite.create();
  const handle = await openDatabase({ kind: 'pglite', client });
  const clock = new VirtualClock({ startAt: START_AT });
  const carrier = createSimCarrier({ clock, seed: 'bench-flow-calls' });
  const bills = await billServer();
  const errors: { err: unknown; context: string }[] = [];
  const onError = (err: unknown, context = 'runtime') => {
    errors.push({ err, context });
  };
  let stopClock: (() => void) | undefined;
  let live: LiveCalls | undefined;
  try {
    await handle.migrate();
    const db = handle.db;
    const projectId = randomUUID();
    await db.insert(projects).values({ id: projectId, name: 'bench-flow-calls' });
    await db.insert(projectLimits).values({ projectId, hasBalance: true, concurrentCallin: CONCURRENT * 2 });
    const template = ASSISTANT_TEMPLATES.find((t) => t.use === 'both') ?? ASSISTANT_TEMPLATES[0];
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
    const flowId = randomUUID();
    const graph = hotline(bills.url);
    await db.insert(callFlows).values({
      id: flowId,
      projectId,
      name: '星河宽带客服热线',
      draft: graph,
      publishedVersion: 1,
      draftChanged: false,
    });
    await db.insert(callFlowVersions).values({ flowId, version: 1, graph, note: '压测' });
    await db.insert(projectNumbers).values([
      { projectId, number: FLOW_NUMBER, label: '流程热线（压测）', inboundFlowId: flowId },
      { projectId, number: ASSISTANT_NUMBER, label: '小助手热线（压测）', inboundAssistantId: assistantId },
    ]);

    const repository = new CallRepository(db, new CallEventHub(), {
      owner: `bench-${randomUUID()}`,
      singleProcess: true,
    });
    // As in the runtime: leases renewed while calls outlive 30 s of wall time.
    live = new LiveCalls(repository, (err) => onError(err));
    await live.start(handle);
    const recordings = new LocalRecordingStore(os.tmpdir());
    const deps: CallDeps = {
      ports: createCallPorts({
        db,
        repository,
        resolveProvider: async () => null,
        resolveRecognizer: async () => null,
        resolveSynthesizer: async () => null,
        embedderFor: async () => undefined,
        recordings,
        onError,
      }),
      carrier,
      clock,
      // The bill server is on loopback: the guard would refuse it, as it must for a tenant's flow.
      flowHttp: createFlowHttpClient({ allowPrivate: true }),
      onError,
    };
    const answering = new Map<string, Promise<CallOutcome | null>>();
    carrier.onInbound((offer) => {
      const call = answerCall(deps, offer);
      answering.set(offer.callId, call);
      live?.add(
        offer.callId,
        { projectId, direction: 'inbound', hangUp: () => carrier.hangUpRemote(offer.callId) },
        call,
      );
    });

    let seq = 0;
    const dial = async (run: Run, callId: string, to: string) => {
      run.offered++;
      const n = seq++;
      const from = `139${String(10_000_000 + ((n * 7919) % 89_999_999)).slice(0, 8)}`;
      // Flow callers press 1 (账单); the persona answers the assistant's questions.
      await carrier.simulateInbound({
        callId,
        from,
        to,
        persona: 'interested',
        ...(to === FLOW_NUMBER ? { script: ['1'] } : {}),
      });
      const outcome = await answering.get(callId);
      answering.delete(callId);
      const reason = outcome?.endReason ?? 'failed';
      run.endReasons.set(reason, (run.endReasons.get(reason) ?? 0) + 1);
    };

    let sampled: Run | null = null;
    const sampler = setInterval(() => {
      if (sampled) sampled.peakRss = Math.max(sampled.peakRss, process.memoryUsage().rss);
    }, 100);
    stopClock = clock.autoAdvance();
    const measure = async (label: string, prefix: string, to: string, count: number): Promise<Run> => {
      const rss = process.memoryUsage().rss;
      const run: Run = {
        label,
        offered: 0,
        endReasons: new Map(),
        wallMs: 0,
        simulatedMs: 0,
        rssBefore: rss,
        peakRss: rss,
        rssAfter: rss,
      };
      sampled = run;
      const started = performance.now();
      const startedAt = clock.now();
      const all = Promise.all(Array.from({ length: count }, (_, i) => dial(run, `${prefix}-${i}`, to)));
      let timer: NodeJS.Timeout | undefined;
      try {
        await Promise.race([
          all,
          new Promise<never>((_, reject) => {
            timer = setTimeout(() => reject(new Error(`${label} exceeded its wall limit`)), WALL_LIMIT_MS);
          }),
        ]);
      } finally {
        clearTimeout(timer);
      }
      run.wallMs = performance.now() - started;
      run.simulatedMs = clock.now() - startedAt;
      run.peakRss = Math.max(run.peakRss, process.memoryUsage().rss);
      run.rssAfter = process.memoryUsage().rss;
      sampled = null;
      return run;
    };

    let baseline: Run;
    let flows: Run;
    try {
      // Warm-up: both paths optimised by V8 before either is measured.
      await measure('warm-up', 'warm-a', ASSISTANT_NUMBER, WARMUP_CALLS);
      await measure('warm-up', 'warm-f', FLOW_NUMBER, WARMUP_CALLS);
      baseline = await measure(
        `${fmtInt(CONCURRENT)} assistant calls at once`,
        'assistant',
        ASSISTANT_NUMBER,
        CONCURRENT,
      );
      flows = await measure(`${fmtInt(CONCURRENT)} flow calls at once`, 'flow', FLOW_NUMBER, CONCURRENT);
    } finally {
      clearInterval(sampler);
    }

    // What the database says about the flow run: every call ended, its path complete.
    const counted = await client.query<{
      total: number;
      completed: number;
      still_live: number;
      full_path: number;
      steps: number;
      turns: number;
    }>(
      `select count(*)::int as total,
              count(*) filter (where end_reason = 'completed')::int as completed,
              count(*) filter (where status <> 'ended')::int as still_live,
              count(*) filter (where flow_path @> '[{"nodeId":"lookup","exit":"success"}]'
                                 and flow_path @> '[{"nodeId":"bye"}]')::int as full_path,
              coalesce(sum(jsonb_array_length(flow_path)), 0)::int as steps,
              coalesce(sum(turn_count), 0)::int as turns
         from calls where project_id = $1 and id like 'flow-%'`,
      [projectId],
    );
    const rows = counted.rows[0];
    const [load1 = 0] = os.loadavg();

    console.log(
      `  the engine's inbound path (answerCall → runFlowCall: route, the flow's published version, ` +
        `admission, the interpreter over the simulated leg, every step and turn written, end, path ` +
        `summary) with the real CallRepository and ports on a fresh in-memory PGlite, virtual clock with ` +
        `DB I/O tracked. Flow: greeting, business hours (open), menu (the scripted caller presses 1), an ` +
        `HTTP lookup of the caller's bill on a local server, the bill read out, hang-up. Baseline in the ` +
        `same run: the same number of callers dialling a number bound to an assistant (${template.name}, ` +
        `script brain) at the same instant.`,
    );
    console.log(
      table(
        [
          'run',
          'calls',
          'wall',
          'calls/s',
          'simulated',
          'RSS before',
          'peak RSS',
          'RSS after',
          'end reasons',
        ],
        [baseline, flows].map((r) => [
          r.label,
          fmtInt(r.offered),
          fmtMs(r.wallMs),
          fmtInt(r.offered / (r.wallMs / 1000)),
          fmtS(r.simulatedMs),
          fmtMiB(r.rssBefore),
          fmtMiB(r.peakRss),
          fmtMiB(r.rssAfter),
          [...r.endReasons.entries()].map(([reason, n]) => `${reason} ${fmtInt(n)}`).join(', '),
        ]),
      ),
    );
    const wallRatio = flows.wallMs / Math.max(baseline.wallMs, 1);
    const growth = (r: Run) => Math.max(0, r.peakRss - r.rssBefore);
    console.log(
      `  flow / assistant: wall ${fmtRatio(wallRatio)}, RSS growth to peak ${fmtMiB(growth(flows))} vs ` +
        `${fmtMiB(growth(baseline))}; database: ${fmtInt(rows?.total ?? 0)} flow calls, ` +
        `${fmtInt(rows?.full_path ?? 0)} with the whole path (HTTP success → hang-up), ` +
        `${fmtInt(rows?.steps ?? 0)} steps, ${fmtInt(rows?.turns ?? 0)} turns, ` +
        `${fmtInt(rows?.still_live ?? 0)} still live; bill server ${fmtInt(bills.requests())} requests`,
    );
    console.log(
      `  RSS ${fmtMiB(rssAtStart)} at the start, process max ${fmtMiB(process.resourceUsage().maxRSS * 1024)}; ` +
        `load average ${load1.toFixed(2)} on ${os.availableParallelism()} cores at the end`,
    );
    for (const { err, context } of errors.slice(0, 3)) {
      console.log(`  error (${context}): ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    }

    const ok =
      errors.length === 0 &&
      rows !== undefined &&
      rows.total === CONCURRENT &&
      rows.completed === CONCURRENT &&
      rows.full_path === CONCURRENT &&
      rows.still_live === 0;
    return [
      budget(
        `flow-calls: ${fmtInt(CONCURRENT)} concurrent inbound flow calls on one worker, 0 errors`,
        ok,
        ok
          ? `${fmtInt(CONCURRENT)} completed with their whole path in ${fmtMs(flows.wallMs)} ` +
              `(${fmtRatio(wallRatio)} of ${fmtInt(CONCURRENT)} assistant calls), peak RSS ${fmtMiB(flows.peakRss)}`
          : `${errors.length} error(s); ${fmtInt(rows?.completed ?? 0)} of ${fmtInt(CONCURRENT)} completed, ` +
              `${fmtInt(rows?.full_path ?? 0)} with the whole path, ${fmtInt(rows?.still_live ?? 0)} still live`,
      ),
    ];
  } finally {
    stopClock?.();
    await live?.stop();
    await carrier.close();
    await bills.close();
    await handle.close();
  }
}
