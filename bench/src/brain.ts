import { type AssistantConfig, assistantConfig, type RetrievedSegment } from '@callpilot/contracts';
import {
  OPT_OUT_PHRASES,
  SOFT_REFUSAL_PHRASES,
  TRANSFER_PHRASES,
} from '../../apps/server/src/engine/brain/intent';
import { createScriptBrain } from '../../apps/server/src/engine/brain/script-brain';
import type { BrainTurn } from '../../apps/server/src/engine/brain/types';
import { type BudgetResult, budget, fmtInt, fmtRatio, table } from './lib/report';

const TURNS = 20_000;
const WARMUP_TURNS = 2_000;
/** The budget for one script-brain reply, retrieval excluded. */
const P99_BUDGET_MS = 5;

// What callees say on real calls: refusals, transfers, questions, small talk, long rambles.
const UTTERANCES: (string | null)[] = [
  '喂，你好',
  '你们是哪家公司的',
  '试听课在哪里上',
  '一节课多少钱',
  '周末有没有时间安排',
  '我考虑一下吧',
  '别再打了，烦不烦',
  '不需要，谢谢',
  '帮我转人工',
  '我要找你们经理',
  null,
  '那我怎么报名',
  '可以，你加我微信吧',
  '孩子今年上三年级，数学一直不太好，老师说基础比较薄弱，你们的课程能不能针对性地补一补，大概要上多久才能看到效果',
  '不感兴趣',
  '好的，再见',
  '这个活动不需要预约吧？',
  '你是真人吗',
  '我在开车，晚点再说',
  '拉黑',
  '有没有优惠',
  '嗯嗯',
  '听不清，你大声点',
  '能不能发个地址给我',
];

const LONG_PASSAGE =
  '## 课程介绍\n\n我们的课程分为基础班、提高班和冲刺班，每个班级不超过二十人。' +
  '所有老师都有五年以上教学经验，课后提供一对一答疑。'.repeat(6) +
  '\n- 上课时间：周六、周日上午九点至十一点\n- 上课地点：朝阳区建国路 88 号三层';

const segment = (over: Partial<RetrievedSegment>): RetrievedSegment => ({
  id: 'seg',
  knowledgeBaseId: 'kb',
  documentId: 'doc',
  documentName: '常见问题.csv',
  content: '',
  question: null,
  answer: null,
  score: 0.8,
  ...over,
});

/** Retrieval is excluded: each turn gets its segments handed in, in the three shapes that occur. */
const KNOWLEDGE: RetrievedSegment[][] = [
  [],
  [segment({ question: '试听课在哪里上？', answer: '朝阳区建国路 88 号三层，地铁国贸站 B 口出来就是。' })],
  [segment({ content: LONG_PASSAGE }), segment({ id: 'seg-2', content: '第二条' })],
];

function benchConfig(): AssistantConfig {
  return assistantConfig.parse({
    openingLine: '您好，我是某某教育的课程顾问小王。',
    conversation: { transferNumber: '400-123-4567', maxTurns: 8 },
    intentRules: {
      A: { keywords: ['试听', '报名', '预约'] },
      B: { keywords: ['课程', '老师', '价格'] },
      C: { keywords: ['再说', '没空'] },
      D: { keywords: ['太贵了', '没用'] },
    },
  });
}

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;

function summarise(samples: number[]) {
  const sorted = [...samples].sort((a, b) => a - b);
  return { p50: percentile(sorted, 50), p99: percentile(sorted, 99), max: sorted.at(-1) ?? Number.NaN };
}

const fmtUs = (ms: number) => `${(ms * 1000).toFixed(1)} µs`;

export async function brainBenchmark(): Promise<BudgetResult[]> {
  const config = benchConfig();
  const brain = createScriptBrain();
  const turnAt = (i: number): BrainTurn => ({
    config,
    history: [],
    utterance: UTTERANCES[i % UTTERANCES.length] ?? null,
    // Cycled on a different period from the utterances, so every utterance meets every shape.
    knowledge: KNOWLEDGE[Math.floor(i / UTTERANCES.length) % KNOWLEDGE.length] ?? [],
    knowledgeVerdict: null,
    turnIndex: (i % config.conversation.maxTurns) + 1,
  });

  // Baseline: the least any rules brain must do per turn, a plain substring scan of the utterance
  // for every phrase it knows, timed the same way (per turn, inside an async function).
  const phrases = [
    ...OPT_OUT_PHRASES,
    ...SOFT_REFUSAL_PHRASES,
    ...TRANSFER_PHRASES,
    ...Object.values(config.intentRules).flatMap((rule) => rule.keywords),
  ];
  let sink = 0;
  const scan = async (utterance: string | null) => {
    for (const phrase of phrases) if (utterance?.includes(phrase)) sink++;
  };

  const baseline: number[] = [];
  const brainTimes: number[] = [];
  let replyChars = 0;
  for (let i = 0; i < WARMUP_TURNS + TURNS; i++) {
    const turn = turnAt(i);
    const b0 = performance.now();
    await scan(turn.utterance);
    const b1 = performance.now();
    for await (const event of brain.turn(turn)) {
      if (event.type === 'delta') replyChars += event.text.length;
    }
    const b2 = performance.now();
    if (i >= WARMUP_TURNS) {
      baseline.push(b1 - b0);
      brainTimes.push(b2 - b1);
    }
  }
  if (sink < 0 || replyChars === 0) throw new Error('the script brain said nothing');

  const base = summarise(baseline);
  const real = summarise(brainTimes);
  console.log(
    `  ${fmtInt(TURNS)} turns (after ${fmtInt(WARMUP_TURNS)} warm-up) over ${UTTERANCES.length} utterances ` +
      `x ${KNOWLEDGE.length} knowledge shapes; retrieval excluded (segments handed in).`,
  );
  console.log(
    table(
      ['per turn', 'p50', 'p99', 'max'],
      [
        ['baseline: substring scan', fmtUs(base.p50), fmtUs(base.p99), fmtUs(base.max)],
        ['script brain reply', fmtUs(real.p50), fmtUs(real.p99), fmtUs(real.max)],
      ],
    ),
  );
  const ratio = real.p99 / Math.max(base.p99, 0.0001);
  console.log(`  ratio script brain / baseline at p99: ${fmtRatio(ratio)}`);
  return [
    budget(
      'brain script reply p99',
      real.p99 <= P99_BUDGET_MS,
      `${real.p99.toFixed(3)} ms (budget ${P99_BUDGET_MS} ms; ${fmtRatio(ratio)} of a plain substring scan)`,
    ),
  ];
}
