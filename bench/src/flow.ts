// Issue #15 budget: the IVR interpreter's own CPU time per node executed. The real runFlow over
// the scripted test leg on a virtual clock, a 30-node hotline (conditions on the holiday calendar
// and the caller's region, menus, digit collection, speech intents, HTTP with mappings, an
// assistant, a busy transfer, voicemail, SMS), many calls in flight at once, against the same
// calls over a flow of 30 plain prompts.

import { VirtualClock } from '../../apps/server/src/engine/clock';
import { runFlow } from '../../apps/server/src/engine/flow/interpreter';
import { buildFlow, type EdgeSpec, type NodeSpec } from '../../apps/server/src/engine/flow/testing/flows';
import { type CallerAction, caller, ScriptLeg } from '../../apps/server/src/engine/flow/testing/script-leg';
import type { FlowDeps, LoadedFlow } from '../../apps/server/src/engine/flow/types';
import { type BudgetResult, budget, fmtInt, fmtMs, fmtRatio, table } from './lib/report';

const CONCURRENT = Number(process.env.FLOW_BENCH_CONCURRENT ?? 100);
const CALLS_PER_SLOT = 30;
const WARMUP_CALLS = 300;
/** The issue's budget for the interpreter's overhead per node, at p99. */
const P99_BUDGET_MS = 1;

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? Number.NaN;
const fmtUs = (ms: number) => `${(ms * 1000).toFixed(0)} µs`;

/** 星河宽带客服热线: 30 nodes, every exit connected, four routes through it. */
function hotline(): LoadedFlow {
  const nodes: NodeSpec[] = [
    ['start', 'start'],
    [
      'init',
      'set',
      {
        assignments: [
          { variable: 'greeting', value: '{{caller}}您好' },
          { variable: 'level', value: 'VIP' },
        ],
      },
    ],
    [
      'hours',
      'condition',
      {
        branches: [
          {
            id: 'sh',
            name: '上海固话',
            match: 'any',
            rules: [
              { kind: 'caller', op: 'region', value: '上海' },
              { kind: 'caller', op: 'prefix', value: '021' },
            ],
          },
          {
            id: 'open',
            name: '营业时间',
            rules: [
              {
                kind: 'business_hours',
                windows: [{ days: [1, 2, 3, 4, 5, 6, 7], start: '00:00', end: '23:59' }],
              },
            ],
          },
        ],
      },
    ],
    ['shPlay', 'play', { text: '上海的客户您好。' }],
    ['closed', 'play', { text: '现在是非工作时间，请留言。' }],
    ['welcome', 'play', { text: '{{greeting}}，现在是{{time}}，欢迎致电星河宽带。' }],
    [
      'main',
      'menu',
      {
        prompt: '查询账单请按1，报修请按2，查询工单请按3，人工服务请按0。',
        options: [{ key: '1' }, { key: '2' }, { key: '3' }, { key: '0' }],
      },
    ],
    [
      'phone',
      'collect',
      {
        prompt: '请输入手机号码。',
        variable: 'phone',
        minDigits: 11,
        maxDigits: 11,
        pattern: '^1[3-9]\\d{9}$',
      },
    ],
    [
      'lookup',
      'http',
      {
        method: 'POST',
        url: 'https://crm.example.com/customers?phone={{phone}}',
        body: '{"phone":"{{phone}}","level":"{{level}}"}',
        headers: [{ name: 'X-Caller', value: '{{caller}}' }],
        mappings: [
          { variable: 'balance', path: 'data.balance' },
          { variable: 'name', path: 'data.name' },
        ],
      },
    ],
    ['bill', 'play', { text: '{{name}}，您的余额为{{balance}}元。' }],
    ['sorry', 'play', { text: '抱歉，查询失败。' }],
    ['billSms', 'sms', { content: '您的余额为{{balance}}元。' }],
    [
      'low',
      'condition',
      {
        branches: [
          {
            id: 'low',
            name: '余额不足',
            rules: [{ kind: 'variable', variable: 'balance', op: 'lt', value: '10' }],
          },
        ],
      },
    ],
    ['lowPlay', 'play', { text: '您的余额不足，请及时充值。' }],
    [
      'ask',
      'speech',
      {
        prompt: '请描述您遇到的问题。',
        variable: 'problem',
        intents: [
          { id: 'net', name: '断网', keywords: ['断网', '没网', '上不了网'] },
          { id: 'slow', name: '网速慢', keywords: ['慢', '卡'] },
          { id: 'bill', name: '账单', keywords: ['账单', '话费'] },
        ],
      },
    ],
    ['ai', 'assistant', { assistantId: 'asst-repair', variables: [{ name: '故障', value: '{{problem}}' }] }],
    ['aiDone', 'play', { text: '感谢您的耐心。' }],
    [
      'order',
      'collect',
      { prompt: '请输入工单号，以井号键结束。', variable: 'orderNo', minDigits: 6, maxDigits: 10 },
    ],
    [
      'status',
      'http',
      {
        url: 'https://crm.example.com/orders/{{orderNo}}',
        mappings: [{ variable: 'state', path: 'data.state' }],
      },
    ],
    [
      'stateCheck',
      'condition',
      {
        branches: [
          {
            id: 'done',
            name: '已完成',
            rules: [{ kind: 'variable', variable: 'state', op: 'eq', value: '已完成' }],
          },
          {
            id: 'pending',
            name: '处理中',
            rules: [{ kind: 'variable', variable: 'state', op: 'regex', value: '处理|派单' }],
          },
        ],
      },
    ],
    ['statePlay', 'play', { text: '工单{{orderNo}}当前状态：{{state}}。' }],
    ['pendingPlay', 'play', { text: '工单{{orderNo}}正在处理，请耐心等待。' }],
    ['mark', 'set', { assignments: [{ variable: 'checked', value: '{{orderNo}}' }] }],
    ['deskIntro', 'play', { text: '正在为您转接人工客服。' }],
    ['desk', 'transfer', { target: '4001234567', prompt: '' }],
    ['busyMenu', 'menu', { prompt: '坐席忙，留言请按1，挂机请按2。', options: [{ key: '1' }, { key: '2' }] }],
    ['vm', 'voicemail', { maxSeconds: 30 }],
    ['vmSms', 'sms', { content: '您的留言已收到，我们会尽快回电。' }],
    ['thanks', 'play', { text: '感谢您的来电。' }],
    ['bye', 'hangup', { text: '再见。', reason: '正常结束' }],
  ];
  const edges: EdgeSpec[] = [
    ['start', 'next', 'init'],
    ['init', 'next', 'hours'],
    ['hours', 'branch:sh', 'shPlay'],
    ['hours', 'branch:open', 'welcome'],
    ['hours', 'else', 'closed'],
    ['shPlay', 'next', 'welcome'],
    ['closed', 'next', 'vm'],
    ['welcome', 'next', 'main'],
    ['main', 'key:1', 'phone'],
    ['main', 'key:2', 'ask'],
    ['main', 'key:3', 'order'],
    ['main', 'key:0', 'deskIntro'],
    ['main', 'invalid', 'bye'],
    ['main', 'timeout', 'bye'],
    ['phone', 'next', 'lookup'],
    ['phone', 'invalid', 'bye'],
    ['phone', 'timeout', 'bye'],
    ['lookup', 'success', 'bill'],
    ['lookup', 'failure', 'sorry'],
    ['bill', 'next', 'billSms'],
    ['sorry', 'next', 'bye'],
    ['billSms', 'next', 'low'],
    ['low', 'branch:low', 'lowPlay'],
    ['low', 'else', 'thanks'],
    ['lowPlay', 'next', 'thanks'],
    ['ask', 'intent:net', 'ai'],
    ['ask', 'intent:slow', 'ai'],
    ['ask', 'intent:bill', 'phone'],
    ['ask', 'nomatch', 'ai'],
    ['ask', 'timeout', 'bye'],
    ['ai', 'next', 'aiDone'],
    ['ai', 'transfer', 'deskIntro'],
    ['aiDone', 'next', 'thanks'],
    ['order', 'next', 'status'],
    ['order', 'invalid', 'bye'],
    ['order', 'timeout', 'bye'],
    ['status', 'success', 'stateCheck'],
    ['status', 'failure', 'sorry'],
    ['stateCheck', 'branch:done', 'statePlay'],
    ['stateCheck', 'branch:pending', 'pendingPlay'],
    ['stateCheck', 'else', 'statePlay'],
    ['statePlay', 'next', 'mark'],
    ['pendingPlay', 'next', 'mark'],
    ['mark', 'next', 'thanks'],
    ['deskIntro', 'next', 'desk'],
    ['desk', 'busy', 'busyMenu'],
    ['desk', 'no_answer', 'vm'],
    ['desk', 'failed', 'vm'],
    ['busyMenu', 'key:1', 'vm'],
    ['busyMenu', 'key:2', 'bye'],
    ['busyMenu', 'invalid', 'bye'],
    ['busyMenu', 'timeout', 'bye'],
    ['vm', 'next', 'vmSms'],
    ['vmSms', 'next', 'thanks'],
    ['thanks', 'next', 'bye'],
  ];
  return buildFlow(nodes, edges, { flowId: 'bench-hotline', name: '星河宽带客服热线' });
}

/** The baseline: 30 plain prompts in a row, each with a variable. */
function prompts(): LoadedFlow {
  const nodes: NodeSpec[] = [['start', 'start']];
  const edges: EdgeSpec[] = [['start', 'next', 'p1']];
  for (let i = 1; i < 30; i++) {
    nodes.push([`p${i}`, 'play', { text: `{{caller}}您好，这是第${i}句提示。` }]);
    if (i < 29) edges.push([`p${i}`, 'next', `p${i + 1}`]);
  }
  return buildFlow(nodes, edges, { flowId: 'bench-prompts', name: '三十句提示' });
}

/** The four routes through the hotline, by what the caller does. */
const SCRIPTS: Array<{ script: CallerAction[]; transfers?: Array<'busy'> }> = [
  { script: [caller.press('1'), caller.press('13912345678')] },
  { script: [caller.press('2'), caller.say('我家宽带断网了')] },
  { script: [caller.bargeIn('3', 800, '人工服务'), caller.press('20261118#')] },
  {
    script: [caller.press('0'), caller.press('1'), caller.say('请尽快回电'), caller.silence()],
    transfers: ['busy'],
  },
];

interface Run {
  overheadMs: number[];
  calls: number;
  nodes: number;
  errors: unknown[];
  wallMs: number;
  endReasons: Map<string, number>;
}

async function runCalls(flow: LoadedFlow, slots: number, perSlot: number): Promise<Run> {
  const clock = new VirtualClock({ startAt: Date.parse('2026-11-18T09:30:00+08:00') });
  const run: Run = { overheadMs: [], calls: 0, nodes: 0, errors: [], wallMs: 0, endReasons: new Map() };
  const deps: FlowDeps = {
    clock,
    loadSubflow: async () => {
      throw new Error('no subflows in the bench');
    },
    http: async () => ({
      ok: true,
      status: 200,
      body: { data: { balance: 88.5, name: '王先生', state: '处理中' } },
      ms: 35,
    }),
    sendSms: async () => {},
    runAssistant: async (request) => {
      await request.onTurn({
        speaker: 'assistant',
        text: '您好，我是报修助手，请问是什么时候开始断网的？',
        dtmf: null,
        startMs: 0,
        endMs: 3000,
        interrupted: false,
        latency: null,
        segments: [],
      });
      return {
        outcome: 'completed',
        grade: 'B',
        assistantId: request.assistantId,
        assistantName: '报修助手',
        version: 1,
      };
    },
  };
  const stop = clock.autoAdvance();
  const started = performance.now();
  try {
    await Promise.all(
      Array.from({ length: slots }, async (_, slot) => {
        for (let k = 0; k < perSlot; k++) {
          const index = slot * perSlot + k;
          const shape = SCRIPTS[index % SCRIPTS.length] as (typeof SCRIPTS)[number];
          const leg = new ScriptLeg({
            clock,
            script: shape.script,
            transfers: shape.transfers,
            from: '13800138000',
          });
          // What a call recorder would do with the events: keep them.
          const kept: unknown[] = [];
          const result = await runFlow(
            { flow, leg, callId: `bench-${index}`, caller: leg.from, callee: leg.to },
            deps,
            { onStep: (step) => void kept.push(step), onTurn: (turn) => void kept.push(turn) },
          );
          run.calls++;
          run.nodes += result.path.length;
          run.overheadMs.push(...result.overheadMs);
          run.endReasons.set(result.endReason, (run.endReasons.get(result.endReason) ?? 0) + 1);
          if (result.error) run.errors.push(result.error);
        }
      }),
    );
  } finally {
    stop();
  }
  run.wallMs = performance.now() - started;
  return run;
}

export async function flowBenchmark(): Promise<BudgetResult[]> {
  const real = hotline();
  const base = prompts();
  if (real.graph.nodes.length !== 30 || base.graph.nodes.length !== 30)
    throw new Error('both flows must have 30 nodes');
  // Warm-up: lets V8 optimise the interpreter, the leg and the clock before either measurement.
  await runCalls(real, 20, WARMUP_CALLS / 20);
  await runCalls(base, 20, WARMUP_CALLS / 20);
  const baseline = await runCalls(base, CONCURRENT, CALLS_PER_SLOT);
  const measured = await runCalls(real, CONCURRENT, CALLS_PER_SLOT);

  const summary = (r: Run) => {
    const sorted = [...r.overheadMs].sort((a, b) => a - b);
    return { p50: percentile(sorted, 50), p99: percentile(sorted, 99), max: sorted.at(-1) ?? Number.NaN };
  };
  const b = summary(baseline);
  const m = summary(measured);
  console.log(
    `  runFlow over the scripted leg on a virtual clock, ${CONCURRENT} calls in flight (x${CALLS_PER_SLOT} back to back); ` +
      'overhead = FlowRunResult.overheadMs (interpreter CPU per node executed; the leg, the clock, the deps and the ' +
      'event handlers excluded). Baseline: a flow of 30 plain prompts, the least a node can cost (a template, ' +
      'one prompt, one step), so the ratio is what branching, input parsing and the calendar add.',
  );
  console.log(
    table(
      ['overhead per node', 'calls', 'nodes', 'p50', 'p99', 'max', 'wall'],
      [
        [
          'baseline: 30 prompts',
          fmtInt(baseline.calls),
          fmtInt(baseline.nodes),
          fmtUs(b.p50),
          fmtUs(b.p99),
          fmtUs(b.max),
          fmtMs(baseline.wallMs),
        ],
        [
          '30-node hotline',
          fmtInt(measured.calls),
          fmtInt(measured.nodes),
          fmtUs(m.p50),
          fmtUs(m.p99),
          fmtUs(m.max),
          fmtMs(measured.wallMs),
        ],
      ],
    ),
  );
  console.log(`  ratio hotline / prompts at p99: ${fmtRatio(m.p99 / Math.max(b.p99, 0.0001))}`);
  console.log(
    `  end reasons (hotline): ${[...measured.endReasons].map(([reason, n]) => `${reason} ${fmtInt(n)}`).join(', ')}`,
  );
  const errors = [...baseline.errors, ...measured.errors];
  if (errors.length > 0) {
    const first = errors[0];
    console.log(
      `  ${errors.length} call(s) failed; first: ${first instanceof Error ? (first.stack ?? first.message) : String(first)}`,
    );
  }
  return [
    budget(
      `flow: interpreter overhead per node p99 <= ${P99_BUDGET_MS} ms`,
      m.p99 <= P99_BUDGET_MS && errors.length === 0,
      errors.length > 0
        ? `${errors.length} call(s) failed, figures are not valid`
        : `${fmtUs(m.p99)} over ${fmtInt(measured.nodes)} nodes (p50 ${fmtUs(m.p50)}; prompts-only baseline p99 ${fmtUs(b.p99)})`,
    ),
  ];
}
