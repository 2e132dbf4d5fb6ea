import type {
  AssistantReport,
  CallinReport,
  KnowledgeGapTopic,
  KnowledgeReport,
  NumberHealthRow,
  ReportFigure,
} from '@callpilot/contracts';
import { act } from '@testing-library/react';
import type { ECElementEvent } from 'echarts';
import { getInstanceByDom, setPlatformAPI } from 'echarts/core';
import { resetOemInfoLoad } from '@/lib/api/get-oem-info';
import { type FakeReply, failure, ok, type RecordedRequest, startFakeServer } from '@/test/fake-server';
import { routeKey } from '@/test/render-route';

// jsdom has no canvas, which ECharts measures label text with even when it draws SVG; a rough
// width keeps the layout going without a console full of "not implemented".
setPlatformAPI({ measureText: (text: string) => ({ width: text.length * 12 }) });

export const REPORTS = '/api/project/p1/reports';

/** Today in China (UTC+8), the day the reports' quick picks count from. */
export function chinaDay(offsetDays = 0): string {
  return new Date(Date.now() + 8 * 3_600_000 + offsetDays * 86_400_000).toISOString().slice(0, 10);
}

const currentUser = {
  isOwnerOrAdmin: true,
  id: 'u1',
  email: 'owner@example.com',
  displayName: '王小明',
  profile: '',
  projects: [
    { id: 'p1', name: '华东外呼项目', company: '示例公司', industry: '教育', disabled: false, role: 'owner' },
  ],
};

const limits = {
  assistantLimit: 0,
  knowledgeLimit: 0,
  ttsCloneLimit: 0,
  hasBalance: false,
  concurrentCallin: 0,
  concurrentCallout: 0,
};

type Handler = (request: RecordedRequest) => FakeReply | undefined;

/** The shell's calls plus `routes` by `METHOD /path` (query strings travel in config.params). */
export function serveReports(routes: Record<string, FakeReply | Handler>) {
  resetOemInfoLoad();
  localStorage.setItem('token', 'tok-1');
  return startFakeServer((request) => {
    if (request.url === '/api/user/current') return ok(currentUser);
    if (request.url === '/api/console/config') return ok({ salesPhone: '400-800-1234' });
    if (request.url.startsWith('/api/oem/')) return ok({ status: false, name: '', logo: '' });
    if (request.url.endsWith('/balance-limit')) return ok(limits);
    const reply = routes[routeKey(request)];
    const answer = typeof reply === 'function' ? reply(request) : reply;
    return answer ?? failure(404, '请求地址出错', 'NOT_FOUND');
  });
}

const figure = (
  value: number,
  previous: number,
  drill: Record<string, string> | null = null,
): ReportFigure => ({
  value,
  previous,
  drill,
});

export const ANSWERED_DRILL = {
  direction: 'inbound',
  from: '2026-11-17T16:00:00.000Z',
  to: '2026-11-24T16:00:00.000Z',
  answered: 'yes',
};

export function makeCallinReport(offered = 150): CallinReport {
  return {
    range: { from: '2026-11-18', to: '2026-11-24', previousFrom: '2026-11-11', previousTo: '2026-11-17' },
    figures: {
      offered: figure(offered, 100, { direction: 'inbound' }),
      answered: figure(120, 100, ANSWERED_DRILL),
      assistantAnswered: figure(90, 0, { direction: 'inbound', answered: 'yes' }),
      transferred: figure(10, 5, { direction: 'inbound', transferred: 'yes' }),
      abandonedRinging: figure(20, 10, null),
      abandonedFlow: figure(5, 5, null),
      overLimit: figure(0, 0, null),
      answerRate: figure(0.8, 1, null),
      avgWaitSeconds: figure(4, 5, null),
      maxWaitSeconds: figure(30, 20, null),
      avgTalkSeconds: figure(60, 50, null),
      maxTalkSeconds: figure(600, 500, null),
    },
    answeredWithin: [
      { label: '3 秒内', count: 80, drill: { direction: 'inbound', waitMax: '3' } },
      { label: '3-5 秒', count: 40, drill: { direction: 'inbound', waitMin: '3', waitMax: '5' } },
    ],
    trend: {
      granularity: 'hour',
      points: [
        { at: '2026-11-18T01:00:00.000Z', values: { offered: 10, answered: 8, answerRate: 0.8 } },
        { at: '2026-11-18T02:00:00.000Z', values: { offered: 12, answered: 9, answerRate: 0.75 } },
      ],
    },
    heatmap: [
      { weekday: 1, hour: 9, value: 12 },
      { weekday: 2, hour: 10, value: 7 },
    ],
    byNumber: [
      {
        key: '02100000001',
        label: '02100000001 上海客服热线',
        values: { offered: 150, answered: 120, answerRate: 0.8 },
        drill: { direction: 'inbound', number: '02100000001' },
      },
    ],
    byFlow: [
      {
        key: 'f1',
        label: '售后热线流程',
        values: { offered: 100, completed: 60 },
        drill: { direction: 'inbound', flowId: 'f1' },
      },
    ],
    flowFunnel: null,
  };
}

export function makeAssistantReport(): AssistantReport {
  const grades = { A: 3, B: 5, C: 10, D: 2 };
  return {
    rows: [
      {
        assistantId: 'a1',
        assistantName: '课程回访小助手',
        version: null,
        calls: 40,
        answered: 20,
        answerRate: 0.5,
        avgTurns: 4.2,
        avgTalkSeconds: 70,
        grades,
        transferRate: 0.1,
        optOutRate: 0.05,
        drill: { assistantId: 'a1' },
      },
      {
        assistantId: 'a1',
        assistantName: '课程回访小助手',
        version: 2,
        calls: 30,
        answered: 15,
        answerRate: 0.5,
        avgTurns: 4,
        avgTalkSeconds: 65,
        grades,
        transferRate: 0.1,
        optOutRate: 0.05,
        drill: { assistantId: 'a1', assistantVersion: '2' },
      },
    ],
    trend: {
      granularity: 'day',
      points: [{ at: '2026-11-17T16:00:00.000Z', values: { calls: 40, answered: 20 } }],
    },
    hangupFunnel: [
      { turn: 1, calls: 8, drill: { answered: 'yes', hangupBy: 'callee', turnsMin: '1', turnsMax: '1' } },
      { turn: 2, calls: 4, drill: { answered: 'yes', hangupBy: 'callee', turnsMin: '2', turnsMax: '2' } },
    ],
    latency: [{ component: 'brain', p50Ms: 420, p95Ms: 1300, samples: 80 }],
    grading: [
      {
        assistantId: 'a1',
        assistantName: '宽带客户回访',
        version: 2,
        regraded: 10,
        agreed: 8,
        matrix: {
          A: { A: 2, B: 1, C: 0, D: 0 },
          B: { A: 0, B: 3, C: 0, D: 0 },
          C: { A: 0, B: 0, C: 3, D: 1 },
          D: { A: 0, B: 0, C: 0, D: 0 },
        },
        drill: { assistantId: 'a1', humanGraded: 'yes' },
      },
    ],
  };
}

export function makeNumberHealth(): { rows: NumberHealthRow[] } {
  return {
    rows: [
      {
        number: '02100000009',
        calls: 200,
        answered: 20,
        answerRate: 0.1,
        baselineAnswerRate: 0.45,
        shortAnsweredShare: 0.6,
        rejected: 90,
        warning: true,
        projectNumber: true,
        restingSince: null,
        trend: [{ at: '2026-11-17T16:00:00.000Z', answerRate: 0.1, calls: 200 }],
        drill: { direction: 'outbound', number: '02100000009' },
      },
    ],
  };
}

export function makeKnowledgeReport(questions = 50): KnowledgeReport {
  return {
    figures: {
      questions: figure(questions, 40, null),
      hitRate: figure(0.8, 0.7, null),
      noAnswerRate: figure(0.2, 0.3, null),
    },
    byKnowledgeBase: [
      { key: 'kb1', label: '课程知识库', values: { questions: 50, hits: 40, hitRate: 0.8 }, drill: null },
    ],
    trend: { granularity: 'day', points: [{ at: '2026-11-17T16:00:00.000Z', values: { questions: 50 } }] },
    topSegments: [
      {
        segmentId: 's1',
        knowledgeBaseId: 'kb1',
        documentName: '课程价格.docx',
        content: '课程价格为 999 元',
        hits: 12,
      },
    ],
  };
}

export function makeGapTopic(overrides: Partial<KnowledgeGapTopic> = {}): KnowledgeGapTopic {
  return {
    id: 'c1:3',
    knowledgeBaseId: 'kb1',
    knowledgeBaseName: '课程知识库',
    question: '可以分期付款吗',
    count: 6,
    examples: [{ callId: 'c1', turnIndex: 3, question: '你们能分期吗', askedAt: '2026-11-20T02:00:00.000Z' }],
    // segmentId: the knowledge report's part adds it to the contract (the pair within its document).
    suggestedPair: {
      documentId: 'd7',
      segmentId: 's9',
      question: '怎么付款',
      score: 0.62,
    } as KnowledgeGapTopic['suggestedPair'],
    ...overrides,
  };
}

/**
 * What ECharts hands its click listeners for a bar, a cell or a funnel step (jsdom cannot hit an
 * SVG shape), sent to the chart drawn in `element`.
 */
export function clickChartItem(element: HTMLElement, seriesIndex: number, dataIndex: number) {
  const event = { componentType: 'series', seriesIndex, dataIndex } as unknown as ECElementEvent;
  act(() => {
    getInstanceByDom(element)?.trigger('click', event);
  });
}

/** A click inside a line chart's grid at the given category and value. */
export function clickChartAt(element: HTMLElement, categoryIndex: number, value: number) {
  const chart = getInstanceByDom(element);
  if (!chart) throw new Error('no chart drawn in the element');
  const [offsetX, offsetY] = chart.convertToPixel({ gridIndex: 0 }, [categoryIndex, value]) as number[];
  act(() => {
    chart.getZr().trigger('click', { offsetX, offsetY });
  });
}
