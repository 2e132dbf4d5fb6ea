import type { KnowledgeTerm } from '@callpilot/contracts';
import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { failure, ok } from '@/test/fake-server';
import {
  makeBase,
  openLimits,
  paged,
  ROOT,
  renderKnowledge,
  serveKnowledge,
  signIn,
} from './knowledge-test-data';

const TERMS = '/api/project/p1/knowledge-terms';
const TIME = '2026-03-01T02:00:00.000Z';

const makeTerm = (overrides: Partial<KnowledgeTerm> = {}): KnowledgeTerm => ({
  id: 't1',
  standard: '光猫',
  variants: ['猫', '猫子'],
  createdAt: TIME,
  updatedAt: TIME,
  ...overrides,
});

let server: ReturnType<typeof serveKnowledge> | undefined;

beforeEach(signIn);

afterEach(() => {
  server?.stop();
  server = undefined;
  vi.restoreAllMocks();
});

const row = (text: string) => screen.getByText(text).closest('tr') as HTMLElement;

function addVariants(dialog: HTMLElement, words: string[]) {
  const input = within(dialog).getByLabelText('口语说法');
  for (const word of words) {
    fireEvent.change(input, { target: { value: word } });
    fireEvent.keyDown(input, { key: 'Enter', code: 'Enter', keyCode: 13 });
  }
}

/** Saved files as `name` → their text, read from the Blob the page handed to an object URL. */
function captureDownloads() {
  const blobs: Blob[] = [];
  Object.assign(URL, {
    createObjectURL: vi.fn((blob: Blob) => {
      blobs.push(blob);
      return `blob:${blobs.length - 1}`;
    }),
    revokeObjectURL: vi.fn(),
  });
  const saved: { name: string; blob: Blob }[] = [];
  vi.spyOn(HTMLAnchorElement.prototype, 'click').mockImplementation(function (this: HTMLAnchorElement) {
    saved.push({ name: this.download, blob: blobs[Number(this.href.split(':').at(-1))] as Blob });
  });
  return saved;
}

describe('口语词典 page', () => {
  it('opens from the knowledge list, explains itself, and pages and searches on the server', async () => {
    const firstPage = Array.from({ length: 20 }, (_, i) =>
      makeTerm({ id: `t${i}`, standard: `标准${i}`, variants: [`说法${i}`] }),
    );
    server = serveKnowledge({
      'GET /api/project/p1/balance-limit': ok(openLimits),
      [`GET ${ROOT}`]: ok(paged([makeBase()], 1)),
      [`GET ${TERMS}`]: (request) => {
        const { page, keyword } = request.config.params;
        if (keyword) return ok(paged(keyword === '猫子' ? [makeTerm()] : [], keyword === '猫子' ? 1 : 0));
        return page === 2 ? ok(paged([makeTerm()], 21, 2)) : ok(paged(firstPage, 21));
      },
    });
    const router = renderKnowledge('/knowledge/list');
    fireEvent.click(await screen.findByRole('button', { name: '口语词典' }));

    expect(await screen.findByRole('heading', { name: '口语词典' })).toBeTruthy();
    expect(router.state.location.pathname).toBe('/knowledge/terms');
    expect(screen.getByText(/问题里的口语说法会先替换为标准词/)).toBeTruthy();
    expect(screen.getByText(/对本项目的所有知识库生效/)).toBeTruthy();
    expect(await screen.findByText('标准0')).toBeTruthy();
    expect(screen.getByText('共 21 条')).toBeTruthy();

    fireEvent.click(screen.getByTitle('2'));
    expect(await screen.findByText('光猫')).toBeTruthy();
    expect(within(row('光猫')).getByText('猫子')).toBeTruthy();

    const search = screen.getByRole('searchbox', { name: '搜索词条' });
    const searchFor = (text: string) => {
      fireEvent.change(search, { target: { value: text } });
      fireEvent.keyDown(search, { key: 'Enter', code: 'Enter', keyCode: 13 });
      // The input takes one Enter per key press; the next search needs the key released.
      fireEvent.keyUp(search, { key: 'Enter', code: 'Enter', keyCode: 13 });
    };
    searchFor('猫子');
    await waitFor(() =>
      expect(server!.requests.at(-1)?.config.params).toEqual({ page: 1, pageSize: 20, keyword: '猫子' }),
    );
    searchFor('路由');
    expect(await screen.findByText('没有包含「路由」的词条')).toBeTruthy();
  });

  it('adds an entry with the contract rules, shows a server refusal, then saves it', async () => {
    let terms: KnowledgeTerm[] = [];
    let refuse = true;
    server = serveKnowledge({
      [`GET ${TERMS}`]: () => ok(paged(terms, terms.length)),
      [`POST ${TERMS}`]: (request) => {
        if (refuse) {
          refuse = false;
          return failure(400, '口语说法“猫”已属于标准词“光猫”');
        }
        const body = request.body as { standard: string; variants: string[] };
        terms = [makeTerm({ id: 't9', ...body })];
        return ok(terms[0]);
      },
    });
    renderKnowledge('/knowledge/terms');

    expect(await screen.findByText(/还没有自定义词条/)).toBeTruthy();
    fireEvent.click(screen.getAllByRole('button', { name: '添加词条' })[0] as HTMLElement);
    const dialog = await screen.findByRole('dialog', { name: '添加词条' });
    fireEvent.click(within(dialog).getByRole('button', { name: '添加' }));
    expect(await within(dialog).findByText('请输入标准词')).toBeTruthy();
    expect(await within(dialog).findByText('请至少填写 1 个口语说法')).toBeTruthy();

    fireEvent.change(within(dialog).getByLabelText('标准词'), { target: { value: '路由 器' } });
    addVariants(dialog, ['路由器']);
    fireEvent.click(within(dialog).getByRole('button', { name: '添加' }));
    expect(await within(dialog).findByText('标准词不能包含空格')).toBeTruthy();
    expect(server.requests.some((r) => r.method === 'POST')).toBe(false);

    fireEvent.change(within(dialog).getByLabelText('标准词'), { target: { value: '路由器' } });
    fireEvent.click(within(dialog).getByRole('button', { name: '添加' }));
    expect(await within(dialog).findByText('口语说法不能与标准词相同')).toBeTruthy();

    // Cancelling discards what was typed: the dialog opens empty again.
    fireEvent.click(within(dialog).getByRole('button', { name: '取消' }));
    await waitFor(() => expect(screen.queryByRole('dialog', { name: '添加词条' })).toBeNull());
    fireEvent.click(screen.getAllByRole('button', { name: '添加词条' })[0] as HTMLElement);
    const again = await screen.findByRole('dialog', { name: '添加词条' });
    expect((within(again).getByLabelText('标准词') as HTMLInputElement).value).toBe('');
    expect(within(again).queryByText('路由器')).toBeNull();
    fireEvent.change(within(again).getByLabelText('标准词'), { target: { value: '宽带' } });
    addVariants(again, ['猫']);
    fireEvent.click(within(again).getByRole('button', { name: '添加' }));
    expect(await screen.findByText('口语说法“猫”已属于标准词“光猫”')).toBeTruthy();
    expect(screen.getByRole('dialog', { name: '添加词条' })).toBeTruthy();

    addVariants(again, ['网络']);
    fireEvent.click(within(again).getByRole('button', { name: '添加' }));
    await waitFor(() => expect(screen.queryByRole('dialog', { name: '添加词条' })).toBeNull());
    expect(server.requests.filter((r) => r.method === 'POST').map((r) => r.body)).toEqual([
      { standard: '宽带', variants: ['猫'] },
      { standard: '宽带', variants: ['猫', '网络'] },
    ]);
    expect(await screen.findByText('宽带')).toBeTruthy();
  });

  it('edits an entry and deletes one after confirmation', async () => {
    let terms = [makeTerm(), makeTerm({ id: 't2', standard: '余额', variants: ['话费'] })];
    server = serveKnowledge({
      [`GET ${TERMS}`]: () => ok(paged(terms, terms.length)),
      [`PUT ${TERMS}/t1`]: (request) => {
        terms = terms.map((t) => (t.id === 't1' ? { ...t, ...(request.body as object) } : t));
        return ok(terms[0]);
      },
      [`DELETE ${TERMS}/t2`]: () => {
        terms = terms.filter((t) => t.id !== 't2');
        return ok(null);
      },
    });
    renderKnowledge('/knowledge/terms');

    fireEvent.click(within(await waitFor(() => row('光猫'))).getByRole('button', { name: '编辑' }));
    // Not by name: antd's test ids make the pagination's size picker share the title's id.
    const dialog = await screen.findByRole('dialog');
    expect(within(dialog).getByText('编辑词条')).toBeTruthy();
    expect((within(dialog).getByLabelText('标准词') as HTMLInputElement).value).toBe('光猫');
    addVariants(dialog, ['调制解调器']);
    fireEvent.click(within(dialog).getByRole('button', { name: '保存' }));
    await waitFor(() => expect(screen.queryByRole('dialog')).toBeNull());
    expect(server.requests.find((r) => r.method === 'PUT')?.body).toEqual({
      standard: '光猫',
      variants: ['猫', '猫子', '调制解调器'],
    });
    expect(await within(row('光猫')).findByText('调制解调器')).toBeTruthy();

    fireEvent.click(within(row('余额')).getByRole('button', { name: '删除' }));
    const confirm = await screen.findByText('删除词条「余额」？');
    fireEvent.click(
      within(confirm.closest('.ant-popover') as HTMLElement).getByRole('button', { name: '删除' }),
    );
    await waitFor(() => expect(screen.queryByText('余额')).toBeNull());
    expect(server.requests.some((r) => r.method === 'DELETE' && r.url === `${TERMS}/t2`)).toBe(true);
  });

  it('imports a file, says what was merged, lists refused rows and downloads them as CSV', async () => {
    server = serveKnowledge({
      [`GET ${TERMS}`]: ok(paged([makeTerm()], 1)),
      [`POST ${TERMS}/import`]: ok({
        created: 2,
        merged: 1,
        unchanged: 0,
        rejected: [
          { row: 4, standard: '路由器', variants: '猫', reason: '口语说法“猫”已属于标准词“光猫”' },
          { row: 6, standard: '', variants: '=1+1', reason: '请输入标准词' },
        ],
      }),
    });
    const saved = captureDownloads();
    renderKnowledge('/knowledge/terms');
    expect(await screen.findByText('光猫')).toBeTruthy();

    const input = document.querySelector('input[type="file"]') as HTMLInputElement;
    fireEvent.change(input, {
      target: { files: [new File(['标准词,口语说法'], '词典.csv', { type: 'text/csv' })] },
    });

    expect(await screen.findByText('导入完成：新增 2 条，合并 1 条，2 行未导入')).toBeTruthy();
    expect(screen.getByText('第 4 行：口语说法“猫”已属于标准词“光猫”')).toBeTruthy();
    const post = server.requests.find((r) => r.method === 'POST')!;
    expect(((post.body as FormData).get('file') as File).name).toBe('词典.csv');

    fireEvent.click(screen.getByRole('button', { name: '下载未导入的行' }));
    expect(saved.map((s) => s.name)).toEqual(['口语词典未导入的行.csv']);
    const text = await saved[0]!.blob.text();
    expect(text.replace(/^\uFEFF/, '').split('\r\n')).toEqual([
      '行号,标准词,口语说法,原因',
      '4,路由器,猫,口语说法“猫”已属于标准词“光猫”',
      // A cell that would run as a formula in a spreadsheet is kept as text.
      "6,,'=1+1,请输入标准词",
      '',
    ]);
  });

  it('exports the entries and shows the built-in dictionary read-only when opened', async () => {
    server = serveKnowledge({
      [`GET ${TERMS}`]: ok(paged([makeTerm()], 1)),
      [`GET ${TERMS}/export`]: ok('标准词,口语说法'),
      [`GET ${TERMS}/builtin`]: ok([
        { standard: '取消', variants: ['退订', '不要了'] },
        { standard: '网速慢', variants: ['网卡'] },
      ]),
    });
    const saved = captureDownloads();
    renderKnowledge('/knowledge/terms');
    expect(await screen.findByText('光猫')).toBeTruthy();
    expect(server.requests.some((r) => r.url === `${TERMS}/builtin`)).toBe(false);

    fireEvent.click(screen.getByRole('button', { name: /导出/ }));
    fireEvent.click(await screen.findByText('Excel (.xlsx)'));
    await waitFor(() => expect(saved.map((s) => s.name)).toEqual(['口语词典.xlsx']));
    expect(server.requests.find((r) => r.url === `${TERMS}/export`)?.config.params).toEqual({
      format: 'xlsx',
    });

    fireEvent.click(screen.getByText('内置词典（只读，对所有项目生效）'));
    expect(await screen.findByText('网速慢')).toBeTruthy();
    const builtin = row('取消');
    expect(within(builtin).getByText('退订')).toBeTruthy();
    expect(within(builtin).queryByRole('button')).toBeNull();
  });
});
