import type {
  AssistantSummary,
  CallDetail,
  CallSummary,
  CallTurn,
  ProjectNumber,
} from '@callpilot/contracts';
import { resetOemInfoLoad } from '@/lib/api/get-oem-info';
import { type FakeReply, failure, ok, type RecordedRequest, startFakeServer } from '@/test/fake-server';
import { routeKey } from '@/test/render-route';

export const NUMBERS = '/api/project/p1/numbers';
export const CALLS = '/api/project/p1/calls';

/** The current user as the server answers it; the shell copies it into the user store. */
export function currentUser(role: 'owner' | 'member') {
  return {
    isOwnerOrAdmin: role === 'owner',
    id: 'u1',
    email: 'owner@example.com',
    displayName: '王小明',
    profile: '',
    projects: [
      { id: 'p1', name: '华东外呼项目', company: '示例公司', industry: '教育', disabled: false, role },
    ],
  };
}

const limits = {
  assistantLimit: 0,
  knowledgeLimit: 0,
  ttsCloneLimit: 0,
  hasBalance: false,
  concurrentCallin: 0,
  concurrentCallout: 0,
};

export function makeNumber(overrides: Partial<ProjectNumber> = {}): ProjectNumber {
  return {
    number: '02100000001',
    label: '上海客服热线',
    enabled: true,
    inboundAssistantId: 'a1',
    inboundAssistantName: '课程回访小助手',
    createdAt: '2026-03-01T02:00:00.000Z',
    ...overrides,
  };
}

export function makeAssistant(overrides: Partial<AssistantSummary> = {}): AssistantSummary {
  return {
    id: 'a1',
    name: '课程回访小助手',
    description: '',
    use: 'both',
    status: 'enabled',
    publishedVersion: 2,
    hasUnpublishedChanges: false,
    brainMode: 'script',
    knowledgeBaseCount: 0,
    createdAt: '2026-02-01T02:00:00.000Z',
    updatedAt: '2026-02-01T02:00:00.000Z',
    ...overrides,
  };
}

export function makeInboundCall(overrides: Partial<CallSummary> = {}): CallSummary {
  return {
    id: 'c9',
    direction: 'inbound',
    callerNumber: '13800000009',
    calleeNumber: '02100000001',
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
    answeredAt: '2026-03-01T02:00:02.000Z',
    endedAt: '2026-03-01T02:00:40.000Z',
    talkSeconds: 38,
    turnCount: 2,
    intentGrade: null,
    machineGrade: null,
    humanGrade: null,
    tags: [],
    summary: '',
    recording: 'pending',
    persona: 'asks_question',
    ...overrides,
  };
}

/** What GET /calls/:id answers while the call still rings: nothing said yet. */
export function ringing(call: CallSummary): CallDetail {
  return {
    ...call,
    status: 'ringing',
    endReason: null,
    answeredAt: null,
    endedAt: null,
    recording: 'none',
    turns: [],
    analysisBy: null,
    gradeReason: '',
    fields: {},
    humanGradedBy: null,
    humanGradedAt: null,
    transferNumber: null,
    transferredAt: null,
    variables: {},
    recordingDurationMs: null,
  };
}

export const turn = (index: number, speaker: CallTurn['speaker'], text: string): CallTurn => ({
  index,
  speaker,
  text,
  dtmf: null,
  startMs: index * 4000,
  endMs: index * 4000 + 3000,
  interrupted: false,
  latency: null,
  segments: [],
});

type Handler = (request: RecordedRequest) => FakeReply | undefined;

/**
 * The whole console's server: the shell's calls (current user, limits, OEM) plus `routes` by
 * `METHOD /path` (a function sees the request); anything else is a 404.
 */
export function serveConsole(role: 'owner' | 'member', routes: Record<string, FakeReply | Handler>) {
  resetOemInfoLoad();
  localStorage.setItem('token', 'tok-1');
  return startFakeServer((request) => {
    if (request.url === '/api/user/current') return ok(currentUser(role));
    if (request.url === '/api/console/config') return ok({ salesPhone: '400-800-1234' });
    if (request.url.startsWith('/api/oem/')) return ok({ status: false, name: '', logo: '' });
    if (request.url.endsWith('/balance-limit')) return ok(limits);
    const reply = routes[routeKey(request)];
    const answer = typeof reply === 'function' ? reply(request) : reply;
    return answer ?? failure(404, '请求地址出错', 'NOT_FOUND');
  });
}
