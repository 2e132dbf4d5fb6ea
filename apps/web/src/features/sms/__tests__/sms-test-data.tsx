import type { SmsSignature, SmsTemplate } from '@callpilot/contracts';
import { useUserStore } from '@/stores/user-store';
import { type FakeReply, failure, ok, type RecordedRequest, startFakeServer } from '@/test/fake-server';
import { renderRoute } from '@/test/render-route';
import { SmsSection } from '../pages/sms-section';

export const SIGNATURES = '/api/project/p1/sms/signatures';
export const TEMPLATES = '/api/project/p1/sms/templates';

export function signIn() {
  localStorage.setItem('token', 'tok-1');
  useUserStore.getState().setUserInfo({
    isOwnerOrAdmin: true,
    id: 'u1',
    email: 'owner@example.com',
    displayName: '王小明',
    profile: '',
    projects: [{ id: 'p1', disabled: false, name: '华东外呼项目' }],
  });
}

const TIME = '2026-03-01T02:00:00.000Z';

const review = {
  status: 'draft',
  rejectReason: null,
  provider: null,
  submittedAt: null,
  reviewedAt: null,
  createdAt: TIME,
  updatedAt: TIME,
} as const;

export function makeSignature(overrides: Partial<SmsSignature> = {}): SmsSignature {
  return {
    id: 's1',
    name: '示例科技',
    source: 'enterprise',
    remark: '',
    proofName: null,
    ...review,
    ...overrides,
  };
}

export function makeTemplate(overrides: Partial<SmsTemplate> = {}): SmsTemplate {
  return {
    id: 't1',
    name: '发货通知',
    type: 'notification',
    content: '您的订单已发货，请留意查收。',
    variables: [],
    remark: '',
    ...review,
    ...overrides,
  };
}

type Row = SmsSignature | SmsTemplate;
type Override = (request: RecordedRequest) => FakeReply | undefined;

/**
 * The review API over two in-memory lists, with the server's state rules, so a test sees the
 * list change after a write as the user would. `override` answers first when it returns a reply.
 */
export function serveSms(
  initial: { signatures?: SmsSignature[]; templates?: SmsTemplate[] },
  override?: Override,
) {
  const lists: Record<'signatures' | 'templates', Row[]> = {
    signatures: [...(initial.signatures ?? [])],
    templates: [...(initial.templates ?? [])],
  };
  let nextId = 100;
  return {
    lists,
    ...startFakeServer((request) => {
      const overridden = override?.(request);
      if (overridden) return overridden;
      const match = /^\/api\/project\/p1\/sms\/(signatures|templates)(?:\/([^/]+))?(?:\/(\w+))?$/.exec(
        request.url,
      );
      if (!match) return failure(404, '请求地址出错', 'NOT_FOUND');
      const kind = match[1] as 'signatures' | 'templates';
      const [id, action] = [match[2], match[3]];
      const list = lists[kind];
      const index = list.findIndex((row) => row.id === id);
      const row = list[index];
      const replace = (next: Row) => {
        list[index] = next;
        return ok(next);
      };
      if (!id && request.method === 'GET') {
        const { page = 1, pageSize = 20, status } = request.config.params ?? {};
        const items = list.filter((candidate) => !status || candidate.status === status);
        return ok({
          items: items.slice((page - 1) * pageSize, page * pageSize),
          total: items.length,
          page,
          pageSize,
        });
      }
      if (!id && request.method === 'POST') {
        const created = {
          ...(kind === 'signatures' ? makeSignature() : makeTemplate()),
          ...(request.body as object),
          id: `new${nextId++}`,
        } as Row;
        list.unshift(created);
        return ok(created);
      }
      if (!row) return failure(404, '不存在', 'NOT_FOUND');
      if (request.method === 'PUT')
        return replace({ ...row, ...(request.body as object), status: 'draft' } as Row);
      if (request.method === 'DELETE') {
        list.splice(index, 1);
        return ok(null);
      }
      if (action === 'proof') {
        const file = (request.body as FormData).get('file') as File;
        return replace({ ...row, proofName: file.name } as Row);
      }
      if (action === 'submit') return replace({ ...row, status: 'reviewing', submittedAt: TIME });
      if (action === 'withdraw') return replace({ ...row, status: 'withdrawn' });
      return failure(404, '请求地址出错', 'NOT_FOUND');
    }),
  };
}

export function renderSms(entry: string) {
  return renderRoute(entry, { path: '/sms/*', element: <SmsSection /> });
}
