import { fireEvent, screen, waitFor } from '@testing-library/react';
import { afterEach, describe, expect, it } from 'vitest';
import { resetOemInfoLoad } from '@/lib/api/get-oem-info';
import { useHistoryStore } from '@/stores/local-values';
import { useOemStore } from '@/stores/oem-store';
import { type FakeReply, ok, startFakeServer } from '@/test/fake-server';
import { renderApp } from '@/test/render-route';

const baseUser = {
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

let server: ReturnType<typeof startFakeServer> | undefined;

afterEach(() => {
  server?.stop();
  server = undefined;
  resetOemInfoLoad();
  useOemStore.setState({ isOem: false, replaceName: '', replaceLogo: '' });
});

function serve(
  user: typeof baseUser,
  oem: FakeReply = ok({ status: false, name: '', logo: '' }),
  balanceLimit: typeof limits = limits,
) {
  server = startFakeServer((request) => {
    if (request.url === '/api/user/current') return ok(user);
    if (request.url === '/api/console/config') return ok({ salesPhone: '400-800-1234' });
    if (request.url.startsWith('/api/oem/')) return oem;
    if (request.url.endsWith('/balance-limit')) return ok(balanceLimit);
    return ok(null);
  });
}

describe('shell', () => {
  it('shows a section not built yet with its title and an empty state', async () => {
    serve(baseUser);
    const router = renderApp('/call-record');
    expect(await screen.findByRole('heading', { name: '通话记录' })).toBeTruthy();
    expect(router.state.location.pathname).toBe('/call-record/list');
    expect(screen.getByRole('link', { name: '通话记录' }).getAttribute('aria-current')).toBe('page');
    expect(await screen.findByText('王小明')).toBeTruthy();
    expect(screen.getByText('owner@example.com')).toBeTruthy();
  });

  it('loads the balance limits of the current project after the login check', async () => {
    serve(baseUser);
    renderApp('/dashboard');
    await waitFor(() =>
      expect(server?.requests.map((request) => request.url)).toContain('/api/project/p1/balance-limit'),
    );
  });

  it('keeps a disabled project on the dashboard and tells the user to contact sales', async () => {
    serve({ ...baseUser, projects: [{ ...baseUser.projects[0], disabled: true }] } as typeof baseUser);
    const router = renderApp('/call-task/list');
    expect(await screen.findByText('您的项目尚未开通，请联系销售开通，销售电话：400-800-1234')).toBeTruthy();
    expect(screen.getByText('提示')).toBeTruthy();
    await waitFor(() => expect(router.state.location.pathname).toBe('/dashboard'));
    fireEvent.click(screen.getByRole('button', { name: '确定' }));
    await waitFor(() => expect(screen.queryByText(/您的项目尚未开通/)).toBeNull());
  });

  it('opens the dialog for a user without projects', async () => {
    serve({ ...baseUser, projects: [] });
    renderApp('/account-info');
    expect(await screen.findByText('您的项目尚未开通，请联系销售开通，销售电话：400-800-1234')).toBeTruthy();
  });

  it('brands the sidebar with the OEM name when white-labelled', async () => {
    serve(baseUser, ok({ status: true, name: '合作伙伴外呼', logo: '' }));
    renderApp('/dashboard');
    expect(await screen.findByText('合作伙伴外呼')).toBeTruthy();
    expect(JSON.parse(localStorage.getItem('oem-store') ?? '{}').state.isOem).toBe(true);
    expect(server?.requests.filter((request) => request.url.startsWith('/api/oem/'))).toHaveLength(1);
  });

  it('warns on a section whose balance limit is 0, and only there', async () => {
    serve(baseUser, undefined, { ...limits, hasBalance: true, knowledgeLimit: 3 });
    const router = renderApp('/assistant/list');
    expect(await screen.findByText('该功能未开通，请联系销售开通')).toBeTruthy();
    await router.navigate('/knowledge/list');
    expect(await screen.findByRole('heading', { name: '知识库' })).toBeTruthy();
    expect(screen.queryByText('该功能未开通，请联系销售开通')).toBeNull();
  });

  it('keeps the last 10 visited paths in historyPathArray', async () => {
    useHistoryStore.setState({ paths: [] });
    serve(baseUser);
    const router = renderApp('/dashboard');
    const stored = () => JSON.parse(localStorage.getItem('historyPathArray') ?? '[]') as string[];
    await waitFor(() => expect(stored()).toEqual(['/dashboard']));
    for (let page = 1; page <= 11; page += 1) {
      await router.navigate(`/call-record/list?page=${page}`);
      await waitFor(() => expect(stored().at(-1)).toBe(`/call-record/list?page=${page}`));
    }
    expect(stored()).toHaveLength(10);
    expect(stored()[0]).toBe('/call-record/list?page=2');
  });
});
