import type { FlowVersionSummary } from '@callpilot/contracts';
import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { FlowVersionsDrawer } from '../flow-versions-drawer';
import { FLOW, hotlineGraph, makeFlowDetail, ok, renderTool, serveFlows } from './flow-tools-fixtures';

let stop = () => {};
afterEach(() => stop());

const versions: FlowVersionSummary[] = [
  {
    version: 2,
    note: '新增报修菜单',
    publishedAt: '2026-03-02T02:00:00.000Z',
    publishedByName: '王小明',
    submittedByName: '李成员',
    live: true,
  },
  {
    version: 1,
    note: '',
    publishedAt: '2026-03-01T02:00:00.000Z',
    publishedByName: null,
    submittedByName: null,
    live: false,
  },
];

/** v1 greeted differently; the stored draft is today's hotline. */
function versionOne() {
  const graph = hotlineGraph();
  const welcome = graph.nodes.find((node) => node.id === 'welcome');
  if (welcome?.type === 'play') welcome.data.text = '您好。';
  return graph;
}

describe('FlowVersionsDrawer', () => {
  it('lists the versions with the live one tagged, and compares one with the draft', async () => {
    stop = serveFlows({
      [`GET ${FLOW}/versions`]: ok(versions),
      [`GET ${FLOW}/versions/1`]: ok(versionOne()),
      [`GET ${FLOW}`]: ok(makeFlowDetail()),
    }).stop;
    renderTool(
      <FlowVersionsDrawer open projectId="p1" flowId="f1" onClose={vi.fn()} onRolledBack={vi.fn()} />,
    );

    const live = await screen.findByRole('listitem', { name: '版本 v2' });
    expect(within(live).getByText('当前线上')).toBeTruthy();
    expect(within(live).getByText('新增报修菜单')).toBeTruthy();
    expect(within(live).getByText(/王小明/)).toBeTruthy();
    const old = screen.getByRole('listitem', { name: '版本 v1' });
    expect(within(old).queryByText('当前线上')).toBeNull();
    expect(within(old).getByText('（无发布说明）')).toBeTruthy();

    fireEvent.click(within(old).getByRole('button', { name: '查看' }));
    const diff = await within(old).findByRole('region', { name: 'v1 与草稿的差异' });
    const changed = await within(diff).findByRole('region', { name: '修改节点' });
    expect(within(changed).getByText('欢迎语')).toBeTruthy();
    expect(within(changed).getByText(/放音内容/).textContent).toContain('您好。');
  });

  it('rolls back to a version after confirming, and hands the editor the new detail', async () => {
    const rolledBack = makeFlowDetail({ publishedVersion: 1, draft: versionOne(), published: versionOne() });
    const server = serveFlows({
      [`GET ${FLOW}/versions`]: ok(versions),
      [`POST ${FLOW}/versions/1/rollback`]: ok(rolledBack),
    });
    stop = server.stop;
    const onRolledBack = vi.fn();
    renderTool(
      <FlowVersionsDrawer open projectId="p1" flowId="f1" onClose={vi.fn()} onRolledBack={onRolledBack} />,
    );

    const old = await screen.findByRole('listitem', { name: '版本 v1' });
    fireEvent.click(within(old).getByRole('button', { name: '回滚到此版本' }));
    expect(await screen.findByText('回滚到 v1？')).toBeTruthy();
    expect(server.requests.some((r) => r.method === 'POST')).toBe(false);
    fireEvent.click(screen.getByRole('button', { name: '回滚' }));

    await waitFor(() => expect(onRolledBack).toHaveBeenCalledWith(rolledBack));
    expect(server.requests.filter((r) => r.method === 'POST').map((r) => r.url)).toEqual([
      `${FLOW}/versions/1/rollback`,
    ]);
    expect(await screen.findByText('已回滚到 v1')).toBeTruthy();
    // The list is read again, so the live tag moves to v1.
    await waitFor(() => expect(server.requests.filter((r) => r.url === `${FLOW}/versions`)).toHaveLength(2));
  });

  it('says when the flow was never published', async () => {
    stop = serveFlows({ [`GET ${FLOW}/versions`]: ok([]) }).stop;
    renderTool(
      <FlowVersionsDrawer open projectId="p1" flowId="f1" onClose={vi.fn()} onRolledBack={vi.fn()} />,
    );
    expect(await screen.findByText('还没有发布过版本，发布后可在这里查看和回滚')).toBeTruthy();
  });
});
