import { type FlowDetail, type FlowSummary, flowGraph } from '@callpilot/contracts';
import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { failure, ok, type RecordedRequest } from '@/test/fake-server';
import { renderApp } from '@/test/render-route';
import { page, serveConsole } from './ivr-fixtures';

const FLOWS = '/api/project/p1/flows';

let server: ReturnType<typeof serveConsole> | undefined;
afterEach(() => {
  server?.stop();
  server = undefined;
  vi.restoreAllMocks();
});

function makeFlow(overrides: Partial<FlowSummary> = {}): FlowSummary {
  return {
    id: 'f1',
    name: '星河宽带客服热线',
    description: '欢迎语、工作时间判断和按键菜单',
    status: 'published',
    publishedVersion: 3,
    numbers: ['02100000001'],
    calls7d: 128,
    nodeCount: 12,
    updatedAt: '2026-03-01T02:00:00.000Z',
    createdAt: '2026-02-01T02:00:00.000Z',
    ...overrides,
  };
}

const startOnly = flowGraph.parse({
  nodes: [{ id: 'start', type: 'start', name: '开始', position: { x: 0, y: 0 } }],
  edges: [],
});

function makeDetail(overrides: Partial<FlowSummary> = {}): FlowDetail {
  return { ...makeFlow(overrides), draft: startOnly, published: null, issues: [] };
}

const hotline = makeFlow();
const changed = makeFlow({
  id: 'f2',
  name: '售后报修',
  description: '',
  status: 'changed',
  publishedVersion: 1,
  numbers: [],
  calls7d: 0,
});
const draft = makeFlow({
  id: 'f3',
  name: '夜间留言',
  description: '',
  status: 'draft',
  publishedVersion: null,
  numbers: [],
  calls7d: 0,
});

const row = (name: string) => screen.getByRole('link', { name }).closest('tr') as HTMLElement;
const listCalls = (requests: RecordedRequest[]) =>
  requests.filter((request) => request.method === 'GET' && request.url === FLOWS);
const fileInput = () => document.querySelector('input[type="file"]') as HTMLInputElement;

describe('通话流程 list', () => {
  it('opens from the section with each flow’s state, numbers and calls, and pages and searches on the server', async () => {
    server = serveConsole('owner', {
      [`GET ${FLOWS}`]: (request) => {
        const params = request.config.params as { page: number; keyword?: string };
        if (params.keyword) return ok(page([changed], 1));
        return ok(params.page === 2 ? page([draft], 21, 2) : page([hotline, changed], 21));
      },
    });
    const router = renderApp('/ivr');

    // The first test of the file loads the shell and the section's lazy chunks cold.
    expect(await screen.findByRole('link', { name: '星河宽带客服热线' }, { timeout: 15_000 })).toBeTruthy();
    expect(router.state.location.pathname).toBe('/ivr/list');
    expect(row('星河宽带客服热线').querySelector('a')?.getAttribute('href')).toBe('/ivr/edit/f1');
    expect(within(row('星河宽带客服热线')).getByText('已发布 v3')).toBeTruthy();
    expect(within(row('星河宽带客服热线')).queryByText('有未发布修改')).toBeNull();
    expect(
      within(row('星河宽带客服热线')).getByRole('link', { name: '02100000001' }).getAttribute('href'),
    ).toBe('/ivr/numbers');
    expect(within(row('星河宽带客服热线')).getByText('128')).toBeTruthy();
    expect(within(row('售后报修')).getByText('已发布 v1')).toBeTruthy();
    expect(within(row('售后报修')).getByText('有未发布修改')).toBeTruthy();
    expect(within(row('售后报修')).getByText('未绑定')).toBeTruthy();
    expect(listCalls(server.requests)[0]?.config.params).toEqual({ page: 1, pageSize: 20 });

    fireEvent.click(screen.getByTitle('2'));
    expect(await screen.findByRole('link', { name: '夜间留言' })).toBeTruthy();
    expect(within(row('夜间留言')).getByText('草稿')).toBeTruthy();
    expect(listCalls(server.requests).at(-1)?.config.params).toEqual({ page: 2, pageSize: 20 });

    fireEvent.change(screen.getByLabelText('搜索流程'), { target: { value: ' 售后 ' } });
    fireEvent.keyDown(screen.getByLabelText('搜索流程'), { key: 'Enter', code: 'Enter', keyCode: 13 });
    await waitFor(() => expect(screen.queryByRole('link', { name: '夜间留言' })).toBeNull());
    expect(screen.getByRole('link', { name: '售后报修' })).toBeTruthy();
    // A search starts again from the first page.
    expect(listCalls(server.requests).at(-1)?.config.params).toEqual({
      page: 1,
      pageSize: 20,
      keyword: '售后',
    });
  });

  it('explains what a flow is when there is none, and opens a new one in the editor', async () => {
    server = serveConsole('owner', {
      [`GET ${FLOWS}`]: ok(page([])),
      [`POST ${FLOWS}`]: (request) =>
        ok(
          makeDetail({
            id: 'f9',
            ...(request.body as { name: string; description: string }),
            status: 'draft',
          }),
        ),
    });
    const router = renderApp('/ivr/list');
    expect(await screen.findByText('还没有通话流程')).toBeTruthy();
    expect(screen.getByText(/通话流程把来电的接待步骤画成一张图/)).toBeTruthy();

    const empty = screen.getByText('还没有通话流程').closest('.ant-empty') as HTMLElement;
    fireEvent.click(within(empty).getByRole('button', { name: '新建流程' }));
    const dialog = await screen.findByRole('dialog', { name: '新建流程' });
    fireEvent.click(within(dialog).getByRole('button', { name: '创建并编辑' }));
    expect(await within(dialog).findByText('请输入流程名称')).toBeTruthy();
    expect(server.requests.some((request) => request.method === 'POST')).toBe(false);

    fireEvent.change(within(dialog).getByLabelText('流程名称'), { target: { value: '总机' } });
    fireEvent.change(within(dialog).getByLabelText('流程说明'), { target: { value: '工作日白天' } });
    fireEvent.click(within(dialog).getByRole('button', { name: '创建并编辑' }));
    await waitFor(() => expect(router.state.location.pathname).toBe('/ivr/edit/f9'));
    expect(server.requests.find((request) => request.method === 'POST')?.body).toEqual({
      name: '总机',
      description: '工作日白天',
    });
  });

  it('shows why a flow cannot be deleted and keeps it; deletes another after confirmation', async () => {
    let flows = [hotline, draft];
    server = serveConsole('owner', {
      [`GET ${FLOWS}`]: () => ok(page(flows)),
      [`DELETE ${FLOWS}/f1`]: failure(
        409,
        '流程已绑定号码 02100000001，请先在号码管理中解除绑定',
        'CONFLICT',
      ),
      [`DELETE ${FLOWS}/f3`]: () => {
        flows = [hotline];
        return ok(null);
      },
    });
    renderApp('/ivr/list');
    await screen.findByRole('link', { name: '星河宽带客服热线' });

    fireEvent.click(within(row('星河宽带客服热线')).getByRole('button', { name: '删除' }));
    const confirm = (await screen.findByText('删除「星河宽带客服热线」？')).closest(
      '.ant-popover',
    ) as HTMLElement;
    fireEvent.click(within(confirm).getByRole('button', { name: '删除' }));
    expect(await screen.findByText('流程已绑定号码 02100000001，请先在号码管理中解除绑定')).toBeTruthy();
    expect(screen.getByRole('link', { name: '星河宽带客服热线' })).toBeTruthy();

    fireEvent.click(within(row('夜间留言')).getByRole('button', { name: '删除' }));
    const second = (await screen.findByText('删除「夜间留言」？')).closest('.ant-popover') as HTMLElement;
    fireEvent.click(within(second).getByRole('button', { name: '删除' }));
    await waitFor(() => expect(screen.queryByRole('link', { name: '夜间留言' })).toBeNull());
    expect(screen.getByRole('link', { name: '星河宽带客服热线' })).toBeTruthy();
  });

  it('exports a flow as <name>.flow.json and copies one', async () => {
    const exported = {
      format: 'callpilot.flow',
      version: 1,
      name: '星河宽带客服热线',
      description: '',
      graph: startOnly,
    };
    let flows = [hotline];
    server = serveConsole('owner', {
      [`GET ${FLOWS}`]: () => ok(page(flows)),
      [`GET ${FLOWS}/f1/export`]: ok(exported),
      [`POST ${FLOWS}/f1/copy`]: () => {
        const copy = makeDetail({
          id: 'f7',
          name: '星河宽带客服热线 副本',
          status: 'draft',
          publishedVersion: null,
          numbers: [],
        });
        flows = [hotline, copy];
        return ok(copy);
      },
    });
    // jsdom has no object URLs and does not navigate; the saved file is what the link asked for.
    const blobs: Blob[] = [];
    Object.assign(URL, {
      createObjectURL: vi.fn((blob: Blob) => {
        blobs.push(blob);
        return 'blob:flow';
      }),
      revokeObjectURL: vi.fn(),
    });
    const saved: string[] = [];
    vi.spyOn(HTMLAnchorElement.prototype, 'click').mockImplementation(function (this: HTMLAnchorElement) {
      saved.push(`${this.download} ${this.href}`);
    });
    renderApp('/ivr/list');
    await screen.findByRole('link', { name: '星河宽带客服热线' });

    fireEvent.click(within(row('星河宽带客服热线')).getByRole('button', { name: '导出' }));
    await waitFor(() => expect(saved).toEqual(['星河宽带客服热线.flow.json blob:flow']));
    expect(JSON.parse(await (blobs[0] as Blob).text())).toEqual(exported);

    fireEvent.click(within(row('星河宽带客服热线')).getByRole('button', { name: '复制' }));
    expect(await screen.findByRole('link', { name: '星河宽带客服热线 副本' })).toBeTruthy();
    expect(screen.getByText('已复制为「星河宽带客服热线 副本」')).toBeTruthy();
  });

  it('refuses a file that is not JSON before sending it, shows the server’s reason for a bad export, and opens an imported flow', async () => {
    let answer: 'bad' | 'good' = 'bad';
    server = serveConsole('owner', {
      [`GET ${FLOWS}`]: ok(page([hotline])),
      [`POST ${FLOWS}/import`]: () =>
        answer === 'bad'
          ? failure(400, 'graph.nodes.0.type：节点类型不支持')
          : ok(makeDetail({ id: 'f8', name: '导入的流程', status: 'draft', publishedVersion: null })),
    });
    const router = renderApp('/ivr/list');
    await screen.findByRole('link', { name: '星河宽带客服热线' });
    const imports = () => server?.requests.filter((request) => request.url === `${FLOWS}/import`) ?? [];

    fireEvent.change(fileInput(), {
      target: { files: [new File(['name,graph\n'], '客户名单.csv', { type: 'text/csv' })] },
    });
    expect(
      await screen.findByText('「客户名单.csv」不是有效的 JSON 文件，请选择通话流程导出的 .flow.json 文件'),
    ).toBeTruthy();
    expect(imports()).toHaveLength(0);

    const bad = {
      format: 'callpilot.flow',
      version: 1,
      name: '坏文件',
      graph: { nodes: [{ id: 'x', type: 'fax' }], edges: [] },
    };
    fireEvent.change(fileInput(), {
      target: { files: [new File([JSON.stringify(bad)], '坏文件.flow.json', { type: 'application/json' })] },
    });
    expect(await screen.findByText('graph.nodes.0.type：节点类型不支持')).toBeTruthy();
    expect(imports()[0]?.body).toEqual(bad);
    expect(router.state.location.pathname).toBe('/ivr/list');

    answer = 'good';
    fireEvent.change(fileInput(), {
      target: { files: [new File([JSON.stringify({ ...bad, graph: startOnly })], '好文件.flow.json')] },
    });
    await waitFor(() => expect(router.state.location.pathname).toBe('/ivr/edit/f8'));
  });
});
