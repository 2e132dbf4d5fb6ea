import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import { toast } from 'sonner';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { EMPTY_USER_INFO, useUserStore } from '@/stores/user-store';
import { type FakeReply, failure, ok, startFakeServer } from '@/test/fake-server';
import { renderRoute, routeKey } from '@/test/render-route';
import { ReviewsSection } from '../components/reviews-section';

let server: ReturnType<typeof startFakeServer> | undefined;

beforeEach(() => {
  localStorage.setItem('token', 'tok-1');
  vi.spyOn(toast, 'error');
  vi.spyOn(toast, 'success');
});
afterEach(() => {
  server?.stop();
  server = undefined;
});

const summary = {
  id: 'r1',
  kind: 'assistant',
  targetId: 'a1',
  targetName: '回访助手',
  status: 'pending',
  note: '改开场白',
  submittedBy: '坐席小李',
  submittedById: 'u2',
  submittedAt: '2026-11-20T02:00:00.000Z',
  decidedBy: null,
  decidedAt: null,
  comment: '',
  baseVersion: 1,
  publishedVersion: null,
};

const detail = {
  ...summary,
  liveVersion: 1,
  changes: [
    {
      path: 'config.openingLine',
      label: '开场白',
      kind: 'changed',
      before: '您好，我是小安。',
      after: '您好，我是新版小安。',
    },
  ],
};

function renderSection(manager: boolean, replies: Record<string, FakeReply> = {}) {
  useUserStore.getState().setUserInfo({
    ...EMPTY_USER_INFO,
    id: manager ? 'u1' : 'u2',
    isOwnerOrAdmin: manager,
    projects: [
      {
        id: 'p1',
        name: '项目',
        company: '',
        industry: '',
        disabled: false,
        role: manager ? 'owner' : 'member',
      },
    ],
  } as never);
  const defaults: Record<string, FakeReply> = {
    'GET /api/project/p1/review-settings': ok({ required: true }),
    'GET /api/project/p1/reviews?page=1&pageSize=20&status=pending': ok({
      items: [summary],
      total: 1,
      page: 1,
      pageSize: 20,
    }),
    'GET /api/project/p1/reviews/r1': ok(detail),
  };
  server = startFakeServer(
    (request) => ({ ...defaults, ...replies })[routeKey(request)] ?? failure(404, '请求地址出错'),
  );
  renderRoute('/account-info', { path: '/account-info', element: <ReviewsSection projectId="p1" /> }, [
    '/login',
  ]);
  return server.requests;
}

describe('发布审核 section', () => {
  it('shows the pending submission and its diff, and approves it with the comment', async () => {
    const requests = renderSection(true, {
      'POST /api/project/p1/reviews/r1/approve': ok({ ...summary, status: 'approved', publishedVersion: 2 }),
    });
    const row = (await screen.findByText('回访助手')).closest('tr')!;
    expect(within(row).getByText('待审核')).toBeTruthy();
    fireEvent.click(within(row).getByRole('button', { name: '审核' }));

    const changes = await screen.findByRole('list', { name: '变更内容' });
    expect(within(changes).getByText('开场白')).toBeTruthy();
    expect(within(changes).getByText('您好，我是小安。')).toBeTruthy();
    expect(within(changes).getByText('您好，我是新版小安。')).toBeTruthy();

    fireEvent.change(screen.getByLabelText('审核意见'), { target: { value: '可以上线' } });
    fireEvent.click(screen.getByRole('button', { name: '批准并发布' }));
    await waitFor(() =>
      expect(requests.find((r) => r.url === '/api/project/p1/reviews/r1/approve')?.body).toEqual({
        comment: '可以上线',
      }),
    );
    expect(toast.success).toHaveBeenCalledWith('已批准并发布 v2');
  });

  it('will not reject without a reason', async () => {
    const requests = renderSection(true);
    fireEvent.click(await screen.findByRole('button', { name: '审核' }));
    await screen.findByRole('list', { name: '变更内容' });
    fireEvent.click(screen.getByRole('button', { name: '驳回' }));
    expect(toast.error).toHaveBeenCalledWith('请填写驳回原因');
    expect(requests.some((r) => r.url.endsWith('/reject'))).toBe(false);
  });

  it('lets a member read and withdraw their own submission, not decide or switch review', async () => {
    const requests = renderSection(false, {
      'POST /api/project/p1/reviews/r1/withdraw': ok({ ...summary, status: 'withdrawn' }),
    });
    const toggle = await screen.findByRole('switch', { name: '开启发布审核' });
    expect(toggle.hasAttribute('disabled') || toggle.getAttribute('aria-disabled') === 'true').toBe(true);
    fireEvent.click(await screen.findByRole('button', { name: '查看' }));
    await screen.findByRole('list', { name: '变更内容' });
    expect(screen.queryByRole('button', { name: '批准并发布' })).toBeNull();
    fireEvent.click(screen.getByRole('button', { name: '撤回提交' }));
    await waitFor(() =>
      expect(requests.some((r) => r.url === '/api/project/p1/reviews/r1/withdraw')).toBe(true),
    );
  });
});
