import type {
  AssistantSummary,
  CallDetail,
  CallSummary,
  CallTurn,
  DashboardFigures,
  DashboardSummary,
} from '@callpilot/contracts';

// What the server answers, for any feature's tests: a published assistant, an answered and graded
// outbound call by default; a test overrides what it is about.

export function makeAssistant(overrides: Partial<AssistantSummary> = {}): AssistantSummary {
  return {
    id: 'a1',
    name: '课程回访小助手',
    description: '',
    use: 'outbound',
    status: 'enabled',
    publishedVersion: 2,
    hasUnpublishedChanges: false,
    brainMode: 'llm',
    knowledgeBaseCount: 0,
    createdAt: '2026-02-01T02:00:00.000Z',
    updatedAt: '2026-02-01T02:00:00.000Z',
    ...overrides,
  };
}

export function makeCall(overrides: Partial<CallSummary> = {}): CallSummary {
  return {
    id: 'c1',
    direction: 'outbound',
    callerNumber: '02100000001',
    calleeNumber: '13800000001',
    taskId: null,
    taskName: null,
    contactId: null,
    contactName: null,
    assistantId: 'a1',
    assistantName: '课程回访小助手',
    assistantVersion: 2,
    status: 'ended',
    endReason: 'completed',
    hangupBy: 'assistant',
    startedAt: '2026-03-01T02:00:00.000Z',
    answeredAt: '2026-03-01T02:00:05.000Z',
    endedAt: '2026-03-01T02:02:10.000Z',
    talkSeconds: 125,
    turnCount: 4,
    intentGrade: 'A',
    machineGrade: 'A',
    humanGrade: null,
    tags: [],
    summary: '客户对少儿编程课感兴趣，约了周六试听。',
    recording: 'ready',
    persona: null,
    ...overrides,
  };
}

/** A turn every 5 s, the assistant on even indexes. */
export function makeTurn(overrides: Partial<CallTurn> & Pick<CallTurn, 'index'>): CallTurn {
  return {
    speaker: overrides.index % 2 === 0 ? 'assistant' : 'callee',
    text: `第${overrides.index + 1}句`,
    dtmf: null,
    startMs: overrides.index * 5000,
    endMs: overrides.index * 5000 + 4000,
    interrupted: false,
    latency: null,
    segments: [],
    ...overrides,
  };
}

/** The detail of `makeCall()` with no turns or analysis yet: override what the test needs. */
export function makeCallDetail(overrides: Partial<CallDetail> = {}): CallDetail {
  return {
    ...makeCall(),
    turns: [],
    analysisBy: null,
    gradeReason: '',
    fields: {},
    humanGradedBy: null,
    humanGradedAt: null,
    flow: null,
    transferNumber: null,
    transferredAt: null,
    variables: {},
    recordingDurationMs: null,
    recordingError: null,
    ...overrides,
  };
}

/** What GET /calls/:id answers for a simulated call that has just been placed: ringing, nothing said. */
export const ringingDetail = (call: CallSummary): CallDetail =>
  makeCallDetail({
    ...call,
    status: 'ringing',
    endReason: null,
    answeredAt: null,
    endedAt: null,
    recording: 'none',
  });

export const dashboardFigures = (values: Partial<DashboardFigures> = {}): DashboardFigures => ({
  calls: 0,
  outbound: 0,
  inbound: 0,
  answered: 0,
  answerRate: null,
  transferred: 0,
  talkMinutes: 0,
  abShare: null,
  drill: null,
  ...values,
});
const zeroFigures = dashboardFigures();
const hours = (day: string, n: number, calls = 0) =>
  Array.from({ length: n }, (_, h) => ({
    at: new Date(Date.parse(`${day}T00:00:00+08:00`) + h * 3_600_000).toISOString(),
    calls: h === 9 ? calls : 0,
    answered: 0,
    drill: {
      from: `${day}T${String(h).padStart(2, '0')}:00:00+08:00`,
      to: `${day}T${String(h).padStart(2, '0')}:59:59+08:00`,
    },
  }));
/** The home page's answer for a project with nothing going on; override what a test needs. */
export const quietDashboard = (values: Partial<DashboardSummary> = {}): DashboardSummary => ({
  at: '2026-03-10T02:30:00.000Z',
  today: zeroFigures,
  yesterdaySameTime: zeroFigures,
  weekAverageSameTime: zeroFigures,
  last7Days: zeroFigures,
  trend: { today: hours('2026-03-10', 11), yesterday: hours('2026-03-09', 24), days: [] },
  runningTasks: [],
  attention: [],
  limits: {
    hasBalance: false,
    balanceFen: 0,
    concurrentCallout: 0,
    concurrentCallin: 0,
    activeOutbound: 0,
    activeInbound: 0,
  },
  ...values,
});
