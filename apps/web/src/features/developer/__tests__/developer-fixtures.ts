import type {
  ApiKey,
  ApiKeyRequestLogEntry,
  WebhookAttempt,
  WebhookDelivery,
  WebhookDeliveryDetail,
  WebhookEndpoint,
} from '@callpilot/contracts';
import { screen } from '@testing-library/react';
import { vi } from 'vitest';
import { resetOemInfoLoad } from '@/lib/api/get-oem-info';
import { type FakeReply, failure, ok, type RecordedRequest, startFakeServer } from '@/test/fake-server';
import { routeKey } from '@/test/render-route';

export const API_KEYS = '/api/project/p1/api-keys';
export const WEBHOOKS = '/api/project/p1/webhooks';

/** A key's whole secret as the server hands it over once. */
export const SECRET = 'cp_live_4fQ8wZr2Lm9Xc7Vb1Nn6Tt3Yy5Uu0Ii8Oo2Pp4Aa6Ss';
export const WEBHOOK_SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';

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

export const page = <T>(items: T[], total = items.length, pageNo = 1, pageSize = 20) => ({
  items,
  total,
  page: pageNo,
  pageSize,
});

export function makeApiKey(overrides: Partial<ApiKey> = {}): ApiKey {
  return {
    id: 'k1',
    name: 'CRM 正式环境',
    maskedKey: 'cp_live_••••7Q2x',
    last4: '7Q2x',
    scopes: { calls: 'write', records: 'read', tasks: 'write', contacts: 'write', assistants: 'read' },
    ipAllowlist: [],
    rateLimitPerMinute: 600,
    status: 'active',
    expiresAt: null,
    createdAt: '2026-03-01T02:00:00.000Z',
    createdBy: { id: 'u1', name: '王小明' },
    lastUsedAt: '2026-03-02T06:30:15.000Z',
    lastUsedIp: '203.0.113.7',
    rolledToId: null,
    revokedAt: null,
    ...overrides,
  };
}

export function makeRequestLog(index: number): ApiKeyRequestLogEntry {
  return {
    id: `r${index}`,
    at: '2026-03-02T06:30:15.000Z',
    method: index % 2 === 0 ? 'GET' : 'POST',
    path: index % 2 === 0 ? '/opendock/v1/calls' : `/opendock/v1/calls/c${index}`,
    status: index % 5 === 0 ? 429 : 200,
    latencyMs: 12 + index,
    ip: '203.0.113.7',
  };
}

export function makeEndpoint(overrides: Partial<WebhookEndpoint> = {}): WebhookEndpoint {
  return {
    id: 'we1',
    url: 'https://crm.example.com/hooks/callpilot',
    description: 'CRM 线索同步',
    events: ['call.ended', 'call.analyzed'],
    enabled: true,
    disabledReason: null,
    disabledAt: null,
    failingSince: null,
    previousSecretUntil: null,
    createdAt: '2026-03-01T02:00:00.000Z',
    recent: { succeeded: 42, failed: 3, pending: 1, dropped: 0 },
    ...overrides,
  };
}

export function makeDelivery(overrides: Partial<WebhookDelivery> = {}): WebhookDelivery {
  return {
    id: 'd1',
    eventId: 'msg_01JQ8Z5X2M4T6V8B0C2D4F6H8K',
    eventType: 'call.ended',
    status: 'failed',
    attempts: 2,
    lastStatusCode: 500,
    lastDurationMs: 87,
    lastError: null,
    nextAttemptAt: null,
    createdAt: '2026-03-02T06:30:00.000Z',
    test: false,
    ...overrides,
  };
}

export function makeAttempt(overrides: Partial<WebhookAttempt> = {}): WebhookAttempt {
  return {
    id: 'a1',
    at: '2026-03-02T06:30:00.000Z',
    trigger: 'auto',
    statusCode: 500,
    durationMs: 87,
    error: null,
    requestHeaders: {
      'content-type': 'application/json',
      'webhook-id': 'msg_01JQ8Z5X2M4T6V8B0C2D4F6H8K',
      'webhook-timestamp': '1772433000',
      'webhook-signature': 'v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4=',
    },
    responseBody: '{"error":"数据库暂时不可用"}',
    ...overrides,
  };
}

export function makeDeliveryDetail(overrides: Partial<WebhookDeliveryDetail> = {}): WebhookDeliveryDetail {
  return {
    ...makeDelivery(),
    payload: {
      type: 'call.ended',
      timestamp: '2026-03-02T06:30:00.000Z',
      data: { id: 'c1', talkSeconds: 102 },
    },
    attemptLog: [
      makeAttempt(),
      makeAttempt({
        id: 'a2',
        at: '2026-03-02T06:30:05.000Z',
        durationMs: 15_000,
        statusCode: null,
        error: '接收方 15 秒内未应答',
        responseBody: null,
      }),
    ],
    ...overrides,
  };
}

type Handler = (request: RecordedRequest) => FakeReply | undefined;

/**
 * The console's server for these pages: the shell's calls (current user, limits, OEM) plus
 * `routes` by `METHOD /path` (a function sees the request); anything else is a 404.
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

/** A clipboard the test can read (jsdom has none). */
export function fakeClipboard() {
  const writeText = vi.fn<(text: string) => Promise<void>>().mockResolvedValue(undefined);
  Object.defineProperty(navigator, 'clipboard', { value: { writeText }, configurable: true });
  return writeText;
}

/**
 * A modal or drawer by its title. Not by role and name: under test every antd dialog's title id
 * is the same `test-id`, so a page with other id'd widgets (tabs, collapse) names them wrongly.
 */
export async function findDialog(title: string): Promise<HTMLElement> {
  const heading = await screen.findByText(title, { selector: '.ant-modal-title, .ant-drawer-title' });
  return heading.closest('[role="dialog"]') as HTMLElement;
}
