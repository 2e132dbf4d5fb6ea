import { type FlowDetail, type FlowGraph, flowGraph } from '@callpilot/contracts';
import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { FlowPublishDialog } from '../flow-publish-dialog';
import { FLOW, hotlineGraph, makeFlowDetail, ok, renderTool, serveFlows } from './flow-tools-fixtures';

let stop = () => {};
afterEach(() => stop());

function renderDialog(flow: FlowDetail, draft: FlowGraph) {
  const props = { onClose: vi.fn(), onPublished: vi.fn(), onJumpToNode: vi.fn() };
  renderTool(<FlowPublishDialog open projectId="p1" flow={flow} draft={draft} {...props} />);
  return props;
}

const publishButton = () => screen.getByRole('button', { name: '发布' });

describe('FlowPublishDialog', () => {
  it('lists the errors as links to their nodes and will not publish until they are fixed', async () => {
    const server = serveFlows({});
    stop = server.stop;
    const draft = hotlineGraph();
    draft.edges = draft.edges.filter((edge) => edge.sourceHandle !== 'timeout');
    const props = renderDialog(makeFlowDetail(), draft);

    const errors = await screen.findByRole('list', { name: '错误' });
    expect(screen.getByText('有 1 个错误，修正后才能发布（点击跳转到节点）')).toBeTruthy();
    expect(publishButton().hasAttribute('disabled')).toBe(true);

    fireEvent.click(within(errors).getByRole('button', { name: '「主菜单」的出口「超时」未连接' }));
    expect(props.onJumpToNode).toHaveBeenCalledWith('menu');
    expect(props.onClose).toHaveBeenCalled();
    // Only the project's review switch is read (it decides 发布 or 提交审核); nothing is written.
    expect(server.requests.filter((r) => r.method !== 'GET')).toEqual([]);
  });

  it('shows what the draft changes against the live version', async () => {
    stop = serveFlows({}).stop;
    const live = hotlineGraph();
    const draft = structuredClone(live);
    const welcome = draft.nodes.find((node) => node.id === 'welcome');
    if (welcome?.type === 'play') welcome.data.text = '您好，欢迎致电星河宽带，通话可能被录音。';
    draft.nodes.push(flowGraph.shape.nodes.element.parse({ id: 'agent', type: 'transfer', name: '转人工' }));
    draft.nodes = draft.nodes.filter((node) => node.id !== 'repair');
    draft.edges = draft.edges.map((edge) => (edge.target === 'repair' ? { ...edge, target: 'agent' } : edge));
    renderDialog(makeFlowDetail({ published: live, publishedVersion: 3 }), draft);

    const changes = await screen.findByRole('region', { name: '变更内容' });
    expect(within(changes).getByText('与线上版本 v3 相比')).toBeTruthy();
    const added = within(changes).getByRole('region', { name: '新增节点' });
    expect(within(added).getByText('转人工')).toBeTruthy();
    expect(
      within(within(changes).getByRole('region', { name: '删除节点' })).getByText('报修挂机'),
    ).toBeTruthy();
    const changed = within(changes).getByRole('region', { name: '修改节点' });
    expect(within(changed).getByText('欢迎语')).toBeTruthy();
    expect(within(changed).getByText(/放音内容/).textContent).toContain('您好，欢迎致电星河宽带。');
    const rewired = within(changes).getByRole('region', { name: '新增连线' });
    expect(rewired.textContent).toContain('主菜单「2 报修」→ 转人工');
  });

  it('says so on the first publish, and publishes with the note', async () => {
    const published = makeFlowDetail({ publishedVersion: 1, status: 'published' });
    const server = serveFlows({ [`POST ${FLOW}/publish`]: ok(published) });
    stop = server.stop;
    const props = renderDialog(
      makeFlowDetail({ published: null, publishedVersion: null, status: 'draft' }),
      hotlineGraph(),
    );

    expect(await screen.findByText('首次发布')).toBeTruthy();
    expect(screen.getByText('检查通过，可以发布')).toBeTruthy();
    fireEvent.change(screen.getByRole('textbox', { name: '发布说明' }), {
      target: { value: '上线热线菜单' },
    });
    fireEvent.click(publishButton());

    await waitFor(() => expect(props.onPublished).toHaveBeenCalledWith(published));
    expect(server.requests.filter((r) => r.method !== 'GET').map((r) => [r.method, r.url, r.body])).toEqual([
      ['POST', `${FLOW}/publish`, { note: '上线热线菜单' }],
    ]);
    expect(await screen.findByText('已发布 v1，新来电将按此版本接听')).toBeTruthy();
  });

  it('stays open with nothing published when the server refuses', async () => {
    const server = serveFlows({
      [`POST ${FLOW}/publish`]: {
        status: 400,
        body: {
          success: false,
          status: 400,
          data: null,
          message: '字段 node menu：智能小助手未发布',
          msg: '',
          error: '',
          code: 'BAD_REQUEST',
        },
      },
    });
    stop = server.stop;
    const props = renderDialog(makeFlowDetail(), hotlineGraph());
    fireEvent.click(await screen.findByRole('button', { name: '发布' }));
    expect(await screen.findByText('字段 node menu：智能小助手未发布')).toBeTruthy();
    expect(props.onPublished).not.toHaveBeenCalled();
    expect(screen.getByRole('dialog')).toBeTruthy();
  });
});
