import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { failure, ok } from '@/test/fake-server';
import {
  makeBase,
  makeDocument,
  openLimits,
  paged,
  ROOT,
  renderKnowledge,
  serveKnowledge,
  signIn,
} from './knowledge-test-data';

let server: ReturnType<typeof serveKnowledge> | undefined;

beforeEach(signIn);

afterEach(() => {
  server?.stop();
  server = undefined;
});

const firstPage = Array.from({ length: 20 }, (_, index) =>
  makeBase({
    id: `kb${index + 1}`,
    name: `知识库${index + 1}`,
    documentCount: index,
    segmentCount: index * 10,
  }),
);
const secondPage = [
  makeBase({ id: 'kb21', name: '产品手册', documentCount: 4, segmentCount: 57, pendingCount: 1 }),
  makeBase({ id: 'kb22', name: '活动规则', documentCount: 1, segmentCount: 3 }),
];

const row = (text: string) => screen.getByText(text).closest('tr') as HTMLElement;

describe('knowledge base list', () => {
  it('pages through the server and shows each base with its counts', async () => {
    server = serveKnowledge({
      'GET /api/project/p1/balance-limit': ok(openLimits),
      [`GET ${ROOT}`]: (request) =>
        request.config.params.page === 2 ? ok(paged(secondPage, 22, 2, 20)) : ok(paged(firstPage, 22, 1, 20)),
    });
    const router = renderKnowledge('/knowledge');

    expect(await screen.findByRole('heading', { name: '知识库' })).toBeTruthy();
    expect(await screen.findByText('知识库1')).toBeTruthy();
    expect(router.state.location.pathname).toBe('/knowledge/list');
    expect(screen.getByText('共 22 条')).toBeTruthy();
    expect(screen.queryByText('产品手册')).toBeNull();

    fireEvent.click(screen.getByTitle('2'));

    expect(await screen.findByText('产品手册')).toBeTruthy();
    const handbook = row('产品手册');
    expect(within(handbook).getByText('4')).toBeTruthy();
    expect(within(handbook).getByText('57')).toBeTruthy();
    expect(within(handbook).getByText('处理中')).toBeTruthy();
    expect(within(row('活动规则')).queryByText('处理中')).toBeNull();
    expect(
      server.requests
        .filter((r) => r.url === ROOT)
        .map((r) => r.config.params)
        .slice(0, 2),
    ).toEqual([
      { page: 1, pageSize: 20 },
      { page: 2, pageSize: 20 },
    ]);
    expect(router.state.location.search).toBe('?page=2');
  });

  it('filters by keyword on the server and says honestly when nothing matches', async () => {
    server = serveKnowledge({
      'GET /api/project/p1/balance-limit': ok(openLimits),
      [`GET ${ROOT}`]: (request) =>
        request.config.params.keyword ? ok(paged([], 0)) : ok(paged([makeBase()], 1)),
    });
    renderKnowledge('/knowledge/list');
    expect(await screen.findByText('售后常见问题')).toBeTruthy();

    const search = screen.getByRole('searchbox', { name: '搜索知识库' });
    fireEvent.change(search, { target: { value: '招聘' } });
    fireEvent.keyDown(search, { key: 'Enter', code: 'Enter', keyCode: 13 });

    expect(await screen.findByText('没有名称包含「招聘」的知识库')).toBeTruthy();
    expect(server.requests.at(-1)?.config.params).toEqual({ page: 1, pageSize: 20, keyword: '招聘' });
  });

  it('offers to create the first base from an empty list', async () => {
    server = serveKnowledge({
      'GET /api/project/p1/balance-limit': ok(openLimits),
      [`GET ${ROOT}`]: ok(paged([], 0)),
    });
    renderKnowledge('/knowledge/list');

    expect(await screen.findByText(/还没有知识库/)).toBeTruthy();
    const buttons = screen.getAllByRole('button', { name: '新建知识库' });
    expect(buttons).toHaveLength(2);
    fireEvent.click(buttons[1] as HTMLElement);
    expect(await screen.findByRole('dialog', { name: '新建知识库' })).toBeTruthy();
  });

  it('disables creation and says why when the knowledge feature is not open', async () => {
    server = serveKnowledge({
      'GET /api/project/p1/balance-limit': ok({ ...openLimits, knowledgeLimit: 0 }),
      [`GET ${ROOT}`]: ok(paged([makeBase()], 1)),
    });
    renderKnowledge('/knowledge/list');

    expect(await screen.findByText('该功能未开通，请联系销售开通')).toBeTruthy();
    expect(screen.getByRole('button', { name: '新建知识库' }).hasAttribute('disabled')).toBe(true);
    // Existing bases stay readable.
    expect(await screen.findByText('售后常见问题')).toBeTruthy();
  });

  it('validates the new base with the contract rules, then creates it and opens it', async () => {
    const created = makeBase({
      id: 'kb9',
      name: '招聘问答',
      description: '',
      documentCount: 0,
      segmentCount: 0,
    });
    server = serveKnowledge({
      'GET /api/project/p1/balance-limit': ok(openLimits),
      [`GET ${ROOT}`]: ok(paged([], 0)),
      [`POST ${ROOT}`]: ok(created),
      'GET /api/project/p1/knowledge-bases/kb9': ok(created),
      'GET /api/project/p1/knowledge-bases/kb9/documents': ok(paged([], 0)),
    });
    const router = renderKnowledge('/knowledge/list');

    fireEvent.click((await screen.findAllByRole('button', { name: '新建知识库' }))[0] as HTMLElement);
    const dialog = await screen.findByRole('dialog', { name: '新建知识库' });
    fireEvent.click(within(dialog).getByRole('button', { name: '创建' }));
    expect(await within(dialog).findByText('请输入知识库名称')).toBeTruthy();

    fireEvent.change(within(dialog).getByLabelText('知识库名称'), { target: { value: '招聘问答' } });
    fireEvent.change(within(dialog).getByLabelText('分段长度'), { target: { value: '300' } });
    fireEvent.change(within(dialog).getByLabelText('分段重叠'), { target: { value: '300' } });
    fireEvent.click(within(dialog).getByRole('button', { name: '创建' }));
    expect(await within(dialog).findByText('分段重叠须小于分段长度')).toBeTruthy();

    fireEvent.change(within(dialog).getByLabelText('分段长度'), { target: { value: '50' } });
    fireEvent.click(within(dialog).getByRole('button', { name: '创建' }));
    expect(await within(dialog).findByText('分段长度不能小于 100 个字符')).toBeTruthy();
    expect(server.requests.some((r) => r.method === 'POST')).toBe(false);

    fireEvent.change(within(dialog).getByLabelText('分段长度'), { target: { value: '800' } });
    fireEvent.change(within(dialog).getByLabelText('分段重叠'), { target: { value: '80' } });
    fireEvent.click(within(dialog).getByRole('button', { name: '创建' }));

    await waitFor(() => expect(router.state.location.pathname).toBe('/knowledge/kb9'));
    expect(server.requests.find((r) => r.method === 'POST')?.body).toEqual({
      name: '招聘问答',
      description: '',
      chunkSize: 800,
      chunkOverlap: 80,
    });
    expect(await screen.findByRole('heading', { name: '招聘问答' })).toBeTruthy();
  });

  it('shows the server refusal of a create and keeps the dialog open', async () => {
    server = serveKnowledge({
      'GET /api/project/p1/balance-limit': ok(openLimits),
      [`GET ${ROOT}`]: ok(paged([], 0)),
      [`POST ${ROOT}`]: failure(403, '知识库数量已达上限（3 个），请联系销售提升额度', 'LIMIT_REACHED'),
    });
    const router = renderKnowledge('/knowledge/list');

    fireEvent.click((await screen.findAllByRole('button', { name: '新建知识库' }))[0] as HTMLElement);
    const dialog = await screen.findByRole('dialog', { name: '新建知识库' });
    fireEvent.change(within(dialog).getByLabelText('知识库名称'), { target: { value: '第四个' } });
    fireEvent.click(within(dialog).getByRole('button', { name: '创建' }));

    expect(await screen.findByText('知识库数量已达上限（3 个），请联系销售提升额度')).toBeTruthy();
    expect(screen.getByRole('dialog', { name: '新建知识库' })).toBeTruthy();
    expect(router.state.location.pathname).toBe('/knowledge/list');
  });

  it('deletes a base after confirmation and refreshes the list', async () => {
    let bases = [makeBase(), makeBase({ id: 'kb2', name: '活动规则' })];
    server = serveKnowledge({
      'GET /api/project/p1/balance-limit': ok(openLimits),
      [`GET ${ROOT}`]: () => ok(paged(bases, bases.length)),
      [`DELETE ${ROOT}/kb2`]: () => {
        bases = bases.filter((base) => base.id !== 'kb2');
        return ok(null);
      },
      [`GET ${ROOT}/kb1/documents`]: ok(paged([makeDocument()], 1)),
    });
    renderKnowledge('/knowledge/list');

    fireEvent.click(
      within(await screen.findByText('活动规则').then((el) => el.closest('tr') as HTMLElement)).getByRole(
        'button',
        { name: '删除' },
      ),
    );
    const confirm = await screen.findByText('删除知识库「活动规则」？');
    fireEvent.click(
      within(confirm.closest('.ant-popover') as HTMLElement).getByRole('button', { name: '删除' }),
    );

    await waitFor(() => expect(screen.queryByText('活动规则')).toBeNull());
    expect(screen.getByText('售后常见问题')).toBeTruthy();
    expect(server.requests.some((r) => r.method === 'DELETE' && r.url === `${ROOT}/kb2`)).toBe(true);
  });
});
