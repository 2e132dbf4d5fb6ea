import { screen, waitFor } from '@testing-library/react';
import { afterEach, describe, expect, it } from 'vitest';
import { type FakeReply, failure, ok, startFakeServer } from '@/test/fake-server';
import { renderRoute } from '@/test/render-route';
import { ProjectGuard } from '../project-guard';

const user = {
  isOwnerOrAdmin: true,
  id: 'u1',
  email: 'owner@example.com',
  displayName: '王小明',
  profile: '',
  projects: [
    { id: 'p1', name: '华东外呼项目', company: '示例公司', industry: '教育', disabled: true, role: 'owner' },
  ],
};

let server: ReturnType<typeof startFakeServer> | undefined;
afterEach(() => {
  server?.stop();
  server = undefined;
});

/** The console config answers only when the test says so: a slow network. */
function serveSlowConfig() {
  let answer: (reply: FakeReply) => void = () => {};
  const config = new Promise<FakeReply>((resolve) => {
    answer = resolve;
  });
  server = startFakeServer((request) => {
    if (request.url === '/api/user/current') return ok(user);
    if (request.url === '/api/console/config') return config;
    return ok(null);
  });
  return answer;
}

function renderGuard() {
  return renderRoute('/dashboard', {
    path: '*',
    element: (
      <ProjectGuard>
        <p>看板内容</p>
      </ProjectGuard>
    ),
  });
}

describe('project guard', () => {
  it('opens the 提示 dialog only once the sales number is there, never with an empty number', async () => {
    const answer = serveSlowConfig();
    renderGuard();
    // The user is loaded and the config asked for, yet not answered: no dialog yet.
    await waitFor(() => expect(server?.requests.map((r) => r.url)).toContain('/api/console/config'));
    expect(await screen.findByText('看板内容')).toBeTruthy();
    expect(screen.queryByText('提示')).toBeNull();
    expect(screen.queryByText(/您的项目尚未开通/)).toBeNull();

    answer(ok({ salesPhone: '400-800-1234' }));
    expect(await screen.findByText('您的项目尚未开通，请联系销售开通，销售电话：400-800-1234')).toBeTruthy();
    expect(screen.getByText('提示')).toBeTruthy();
  });

  it('still tells the user to contact sales when the number cannot be loaded', async () => {
    const answer = serveSlowConfig();
    renderGuard();
    await waitFor(() => expect(server?.requests.map((r) => r.url)).toContain('/api/console/config'));
    answer(failure(500, '服务器错误', 'INTERNAL'));
    expect(await screen.findByText('您的项目尚未开通，请联系销售开通', {}, { timeout: 5000 })).toBeTruthy();
  });
});
