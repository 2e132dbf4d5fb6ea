import type { AssistantSummary, CallSummary, ProjectNumber, Trunk, TrunkStatus } from '@callpilot/contracts';
import { resetOemInfoLoad } from '@/lib/api/get-oem-info';
import { makeCall, makeAssistant as makeSharedAssistant } from '@/test/api-fixtures';
import { type FakeReply, failure, ok, type RecordedRequest, startFakeServer } from '@/test/fake-server';
import { routeKey } from '@/test/render-route';

export const NUMBERS = '/api/project/p1/numbers';
export const CALLS = '/api/project/p1/calls';
export const TRUNKS = '/api/project/p1/trunks';

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
    restingSince: null,
    inboundFlowId: null,
    inboundFlowName: null,
    trunkId: null,
    trunkName: null,
    createdAt: '2026-03-01T02:00:00.000Z',
    ...overrides,
  };
}

/** What every trunk says while the server runs the simulated carrier. */
export const SIM_OFF: TrunkStatus = {
  state: 'sip_off',
  detail: '服务器当前运行在模拟线路（TELEPHONY=sim）',
  registeredAt: null,
  optionsAt: null,
  optionsRttMs: null,
  optionsStatus: null,
  activeCalls: null,
};

/** A register trunk to a carrier, with a stored password. */
export function makeTrunk(overrides: Partial<Trunk> = {}): Trunk {
  return {
    id: 't1',
    name: '电信 SIP 中继',
    kind: 'register',
    transport: 'udp',
    registrar: 'sip.carrier.example.com:5060',
    username: '02160880000',
    authUsername: '',
    hasPassword: true,
    passwordHint: '81',
    registerExpires: 300,
    outboundProxy: '',
    signallingAddress: '',
    peerAddresses: [],
    codecs: ['PCMA', 'PCMU'],
    callerIdFormat: 'national',
    maxConcurrent: 30,
    enabled: true,
    numberCount: 0,
    status: SIM_OFF,
    createdAt: '2026-03-01T02:00:00.000Z',
    updatedAt: '2026-03-01T02:00:00.000Z',
    ...overrides,
  };
}

export const page = <T>(items: T[], total = items.length, pageNo = 1, pageSize = 20) => ({
  items,
  total,
  page: pageNo,
  pageSize,
});

/** An assistant that may answer calls (published, for inbound and outbound). */
export const makeAssistant = (overrides: Partial<AssistantSummary> = {}): AssistantSummary =>
  makeSharedAssistant({ use: 'both', brainMode: 'script', ...overrides });

/** A 模拟来电 to 02100000001, answered by 课程回访小助手. */
export const makeInboundCall = (overrides: Partial<CallSummary> = {}): CallSummary =>
  makeCall({
    id: 'c9',
    direction: 'inbound',
    callerNumber: '13800000009',
    calleeNumber: '02100000001',
    talkSeconds: 38,
    turnCount: 2,
    intentGrade: null,
    machineGrade: null,
    summary: '',
    recording: 'pending',
    persona: 'asks_question',
    ...overrides,
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
    // The number form lists the project's trunks; none unless a test says otherwise.
    const reply =
      routes[routeKey(request)] ?? (routeKey(request) === `GET ${TRUNKS}` ? ok(page([])) : undefined);
    const answer = typeof reply === 'function' ? reply(request) : reply;
    return answer ?? failure(404, '请求地址出错', 'NOT_FOUND');
  });
}
