import type { HitTestResult, KnowledgeDocument } from '@callpilot/contracts';
import { act, fireEvent, screen, waitFor, within } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ok } from '@/test/fake-server';
import { qaTemplateCsv } from '../utils/knowledge-files';
import {
  makeBase,
  makeDocument,
  makeSegment,
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

const BASE = `${ROOT}/kb1`;
const base = makeBase();

// The same file name may also appear in the upload notice; the row is the one inside the table.
function row(text: string): HTMLElement {
  const found = screen
    .getAllByText(text)
    .map((element) => element.closest('tr'))
    .find((tr) => tr !== null);
  if (!found) throw new Error(`no table row with ${text}`);
  return found;
}

function fileInput(): HTMLInputElement {
  const input = document.querySelector('input[type="file"]');
  if (!(input instanceof HTMLInputElement)) throw new Error('no file input');
  return input;
}

function chooseFiles(files: File[]) {
  fireEvent.change(fileInput(), { target: { files } });
}

describe('knowledge base page: documents', () => {
  it('refuses a file of the wrong type before sending, and lists the files the server refused with reasons', async () => {
    const accepted = makeDocument({
      id: 'd2',
      fileName: '保修条款.docx',
      fileType: 'docx',
      status: 'queued',
    });
    let documents: KnowledgeDocument[] = [];
    server = serveKnowledge({
      'GET /api/project/p1/balance-limit': ok(openLimits),
      [`GET ${BASE}`]: ok(base),
      [`GET ${BASE}/documents`]: () => ok(paged(documents, documents.length)),
      [`POST ${BASE}/documents`]: () => {
        documents = [accepted];
        return ok({
          accepted: [accepted],
          rejected: [{ fileName: '扫描件.pdf', reason: 'PDF 文件已损坏，无法解析' }],
        });
      },
    });
    renderKnowledge('/knowledge/kb1');
    expect(await screen.findByRole('heading', { name: '售后常见问题' })).toBeTruthy();
    expect(await screen.findByText('还没有文档，请在上方上传')).toBeTruthy();

    chooseFiles([new File(['MZ'], '安装包.exe', { type: 'application/octet-stream' })]);
    expect(await screen.findByText('：不支持的文件类型，仅支持 txt、md、pdf、docx、csv、xlsx')).toBeTruthy();
    expect(screen.getByText('1 个文件未能上传')).toBeTruthy();
    expect(server.requests.some((r) => r.method === 'POST')).toBe(false);

    chooseFiles([
      new File(['保修一年'], '保修条款.docx'),
      new File(['%PDF-broken'], '扫描件.pdf', { type: 'application/pdf' }),
      new File([], '空白.txt', { type: 'text/plain' }),
    ]);

    expect(await screen.findByText('已上传 1 个文件，2 个文件未能上传')).toBeTruthy();
    expect(screen.getByText('：PDF 文件已损坏，无法解析')).toBeTruthy();
    expect(screen.getByText('：文件为空')).toBeTruthy();
    expect(screen.getByText('：已加入解析队列')).toBeTruthy();
    const posts = server.requests.filter((r) => r.method === 'POST');
    expect(posts).toHaveLength(1);
    const sent = (posts[0]!.body as FormData).getAll('file') as File[];
    expect(sent.map((file) => file.name)).toEqual(['保修条款.docx', '扫描件.pdf']);
    // The new document appears in the table without a reload.
    expect(within(await waitFor(() => row('保修条款.docx'))).getByText('排队中')).toBeTruthy();
  });

  it('follows indexing by polling: 排队中, 解析中 with progress, then 可用, and stops polling', async () => {
    const states: KnowledgeDocument[] = [
      makeDocument({ status: 'queued', progress: 0, segmentCount: 0 }),
      makeDocument({ status: 'parsing', progress: 40, segmentCount: 0 }),
      makeDocument({ status: 'ready', progress: 100, segmentCount: 12 }),
    ];
    let polls = 0;
    server = serveKnowledge({
      'GET /api/project/p1/balance-limit': ok(openLimits),
      [`GET ${BASE}`]: ok(base),
      [`GET ${BASE}/documents`]: () => {
        const document = states[Math.min(polls, states.length - 1)] as KnowledgeDocument;
        polls += 1;
        return ok(paged([document], 1));
      },
    });
    renderKnowledge('/knowledge/kb1');

    expect(within(await waitFor(() => row('退换货政策.pdf'))).getByText('排队中')).toBeTruthy();
    await waitFor(() => expect(within(row('退换货政策.pdf')).getByText('解析中')).toBeTruthy());
    expect(within(row('退换货政策.pdf')).getByText('40%')).toBeTruthy();
    await waitFor(() => expect(within(row('退换货政策.pdf')).getByText('可用')).toBeTruthy());
    expect(within(row('退换货政策.pdf')).getByText('12')).toBeTruthy();

    const settledAt = server.requests.filter((r) => r.url === `${BASE}/documents`).length;
    await new Promise((resolve) => setTimeout(resolve, 2000));
    // At most the one refresh that follows the end of indexing; no more polling after it.
    expect(server.requests.filter((r) => r.url === `${BASE}/documents`).length).toBeLessThanOrEqual(
      settledAt + 1,
    );
  });

  it('shows why a document failed and queues it again on 重新解析', async () => {
    let document = makeDocument({
      status: 'failed',
      progress: 0,
      error: 'PDF 文件已加密，无法读取内容',
      segmentCount: 0,
    });
    server = serveKnowledge({
      'GET /api/project/p1/balance-limit': ok(openLimits),
      [`GET ${BASE}`]: ok(base),
      [`GET ${BASE}/documents`]: () => ok(paged([document], 1)),
      [`POST ${BASE}/documents/d1/reindex`]: () => {
        document = { ...document, status: 'queued', error: '' };
        return ok(document);
      },
    });
    renderKnowledge('/knowledge/kb1');

    const failed = await waitFor(() => row('退换货政策.pdf'));
    expect(within(failed).getByText('失败')).toBeTruthy();
    expect(within(failed).getByText('PDF 文件已加密，无法读取内容')).toBeTruthy();

    fireEvent.click(within(failed).getByRole('button', { name: '重新解析' }));
    await waitFor(() => expect(within(row('退换货政策.pdf')).getByText('排队中')).toBeTruthy());
    expect(within(row('退换货政策.pdf')).queryByText('PDF 文件已加密，无法读取内容')).toBeNull();
  });

  it('shows what the import of a ready question-answer file skipped', async () => {
    const notice = '1 行缺少问题或答案，已跳过；2 个相似问超过 200 个字符，已跳过';
    server = serveKnowledge({
      'GET /api/project/p1/balance-limit': ok(openLimits),
      [`GET ${BASE}`]: ok(base),
      [`GET ${BASE}/documents`]: ok(
        paged([makeDocument({ fileName: '常见问答.csv', fileType: 'csv', kind: 'qa', error: notice })], 1),
      ),
    });
    renderKnowledge('/knowledge/kb1');
    const ready = await waitFor(() => row('常见问答.csv'));
    expect(within(ready).getByText('可用')).toBeTruthy();
    expect(within(ready).getByText(notice)).toBeTruthy();
  });

  it('offers a question-answer template with the optional 相似问题 column and says how to fill it', async () => {
    server = serveKnowledge({
      'GET /api/project/p1/balance-limit': ok(openLimits),
      [`GET ${BASE}`]: ok(base),
      [`GET ${BASE}/documents`]: ok(paged([], 0)),
    });
    renderKnowledge('/knowledge/kb1');
    expect(await screen.findByText(/可选“相似问题”列/)).toBeTruthy();
    const text = await qaTemplateCsv().text();
    // Blob.text() drops the BOM that the file starts with.
    expect(text.replace(/^\uFEFF/, '').startsWith('问题,答案,相似问题\r\n')).toBe(true);
    // One cell, quoted, holding a similar question a line.
    expect(text).toContain(',"几点开门\n周末营业吗\n几点下班"\r\n');
  });
});

describe('knowledge base page: segments', () => {
  it('lists segments with question-answer pairs, filters by keyword, and disables one through PUT', async () => {
    let segments = [
      makeSegment(),
      makeSegment({
        id: 's2',
        position: 2,
        documentId: 'd2',
        documentName: '常见问答.csv',
        content: '问：支持货到付款吗？\n答：支持，部分偏远地区除外。',
        question: '支持货到付款吗？',
        answer: '支持，部分偏远地区除外。',
        similarQuestions: ['能到付吗', '收货时再付钱行吗'],
        charCount: 20,
      }),
    ];
    server = serveKnowledge({
      'GET /api/project/p1/balance-limit': ok(openLimits),
      [`GET ${BASE}`]: ok(base),
      [`GET ${BASE}/documents`]: ok(paged([makeDocument()], 1)),
      [`GET ${BASE}/segments`]: (request) =>
        request.config.params.keyword === '货到付款'
          ? ok(paged(segments.slice(1), 1))
          : ok(paged(segments, 2)),
      [`PUT ${BASE}/segments/s1`]: (request) => {
        segments = segments.map((segment) =>
          segment.id === 's1' ? { ...segment, ...(request.body as object) } : segment,
        );
        return ok(segments[0]);
      },
    });
    renderKnowledge('/knowledge/kb1?tab=segments');

    expect(await screen.findByText('商品签收后 7 天内可无理由退货，需保持包装完好。')).toBeTruthy();
    expect(screen.getByText('支持货到付款吗？')).toBeTruthy();
    expect(screen.getByText('支持，部分偏远地区除外。')).toBeTruthy();
    expect(screen.getByText('共 2 条')).toBeTruthy();
    // A pair's similar questions: counted in a tag, listed under its question.
    const pairRow = row('支持货到付款吗？');
    expect(within(pairRow).getByText('相似问 2')).toBeTruthy();
    expect(within(pairRow).getByText('能到付吗')).toBeTruthy();
    expect(within(pairRow).getByText('收货时再付钱行吗')).toBeTruthy();
    expect(within(row('商品签收后 7 天内可无理由退货，需保持包装完好。')).queryByText(/相似问/)).toBeNull();

    const toggle = screen.getByRole('switch', { name: '启用分段 #1' });
    expect(toggle.getAttribute('aria-checked')).toBe('true');
    fireEvent.click(toggle);

    await waitFor(() =>
      expect(screen.getByRole('switch', { name: '启用分段 #1' }).getAttribute('aria-checked')).toBe('false'),
    );
    expect(server.requests.find((r) => r.method === 'PUT')).toMatchObject({
      url: `${BASE}/segments/s1`,
      body: { enabled: false },
    });

    const search = screen.getByRole('searchbox', { name: '搜索分段' });
    fireEvent.change(search, { target: { value: '货到付款' } });
    fireEvent.keyDown(search, { key: 'Enter', code: 'Enter', keyCode: 13 });
    await waitFor(() =>
      expect(screen.queryByText('商品签收后 7 天内可无理由退货，需保持包装完好。')).toBeNull(),
    );
    expect(screen.getByText('共 1 条')).toBeTruthy();
  });

  it('edits a question-answer pair as a pair, with its similar questions one a line', async () => {
    const pair = makeSegment({
      content: '问：几点下班？\n答：六点。',
      question: '几点下班？',
      answer: '六点。',
      similarQuestions: ['什么时候下班'],
    });
    server = serveKnowledge({
      'GET /api/project/p1/balance-limit': ok(openLimits),
      [`GET ${BASE}`]: ok(base),
      [`GET ${BASE}/documents`]: ok(paged([makeDocument()], 1)),
      [`GET ${BASE}/segments`]: ok(paged([pair], 1)),
      [`PUT ${BASE}/segments/s1`]: ok(pair),
    });
    renderKnowledge('/knowledge/kb1?tab=segments');

    const pairRow = await waitFor(() => row('几点下班？'));
    fireEvent.click(within(pairRow).getByRole('button', { name: '编辑' }));
    // antd gives every generated id the same value under test, so the dialog's aria name is unreliable here.
    const dialog = await screen.findByRole('dialog');
    expect(within(dialog).getByText('编辑分段 #1')).toBeTruthy();
    const similar = within(dialog).getByLabelText('相似问') as HTMLTextAreaElement;
    expect(similar.value).toBe('什么时候下班');
    fireEvent.change(within(dialog).getByLabelText('答案'), { target: { value: '工作日下午六点。' } });
    fireEvent.change(similar, {
      target: { value: '什么时候下班\n\n  几点能走  \n什么时候下班\n下班时间' },
    });
    fireEvent.click(within(dialog).getByRole('button', { name: '保存' }));

    await waitFor(() =>
      expect(server?.requests.find((r) => r.method === 'PUT')?.body).toEqual({
        question: '几点下班？',
        answer: '工作日下午六点。',
        similarQuestions: ['什么时候下班', '几点能走', '下班时间'],
      }),
    );
  });

  it('refuses too many or too long similar questions with the contract message, before sending', async () => {
    const pair = makeSegment({
      content: '问：几点下班？\n答：六点。',
      question: '几点下班？',
      answer: '六点。',
    });
    server = serveKnowledge({
      'GET /api/project/p1/balance-limit': ok(openLimits),
      [`GET ${BASE}`]: ok(base),
      [`GET ${BASE}/documents`]: ok(paged([makeDocument()], 1)),
      [`GET ${BASE}/segments`]: ok(paged([pair], 1)),
      [`PUT ${BASE}/segments/s1`]: ok(pair),
    });
    renderKnowledge('/knowledge/kb1?tab=segments');
    fireEvent.click(within(await waitFor(() => row('几点下班？'))).getByRole('button', { name: '编辑' }));
    const dialog = await screen.findByRole('dialog');
    const similar = within(dialog).getByLabelText('相似问');

    fireEvent.change(similar, {
      target: { value: Array.from({ length: 21 }, (_, i) => `问法${i}`).join('\n') },
    });
    fireEvent.click(within(dialog).getByRole('button', { name: '保存' }));
    expect(await within(dialog).findByText('相似问最多 20 个')).toBeTruthy();

    fireEvent.change(similar, { target: { value: '长'.repeat(201) } });
    expect(await within(dialog).findByText('相似问不能超过 200 个字符')).toBeTruthy();
    expect(server.requests.some((r) => r.method === 'PUT')).toBe(false);
  });
});

describe('knowledge base page: hit test', () => {
  const result: HitTestResult = {
    mode: 'fulltext',
    tookMs: 12.4,
    segments: [
      {
        id: 's2',
        knowledgeBaseId: 'kb1',
        documentId: 'd2',
        documentName: '常见问答.csv',
        content: '问：周末上班吗？\n答：周六上午有人值班。',
        question: '周末上班吗？',
        answer: '周六上午有人值班。',
        score: 0.823,
        relevance: 0.8,
        matchedTerms: [
          { term: '周末', weight: 0.55, via: null },
          { term: '有人', weight: 0.25, via: '上班' },
        ],
        rerankPosition: null,
      },
      {
        id: 's1',
        knowledgeBaseId: 'kb1',
        documentId: 'd1',
        documentName: '退换货政策.pdf',
        content: '工作日 9:00-18:00 受理退货。',
        question: null,
        answer: null,
        score: 0.21,
        relevance: 0.5,
        matchedTerms: [{ term: '有人', weight: 0.25, via: '受理' }],
        rerankPosition: null,
      },
    ],
    confidence: 0.823,
    threshold: 0.3,
    verdict: 'answer',
    answered: true,
    query: {
      original: '喂你好，周末有人吗',
      cleaned: '周末有人吗',
      removedFillers: ['喂', '你好'],
      normalized: [],
      rewritten: null,
    },
    rewriteMs: null,
    rerankMs: null,
    llmNotice: '',
  };

  const refused: HitTestResult = {
    ...result,
    segments: [
      {
        ...(result.segments[1] as HitTestResult['segments'][number]),
        rerankPosition: 1,
        matchedTerms: [{ term: '猫', weight: 0.6, via: '光猫' }],
      },
    ],
    confidence: 0.21,
    threshold: 0.5,
    verdict: 'low_confidence',
    answered: false,
    query: {
      original: '那个猫一直闪红灯咋整',
      cleaned: '光猫一直闪红灯咋整',
      removedFillers: ['那个'],
      normalized: [{ from: '猫', to: '光猫' }],
      rewritten: '光猫一直闪红灯怎么办？',
    },
    rewriteMs: 412.6,
    rerankMs: 388.2,
    llmNotice: '',
  };

  const providers = ok(
    paged(
      [
        {
          id: 'lp1',
          name: '通义千问',
          baseUrl: 'https://dashscope.aliyuncs.com/compatible-mode/v1',
          model: 'qwen-turbo',
          embeddingModel: '',
          hasApiKey: true,
          apiKeyHint: '1234',
          createdAt: '2026-03-01T02:00:00.000Z',
          updatedAt: '2026-03-01T02:00:00.000Z',
        },
      ],
      1,
      1,
      100,
    ),
  );

  it('shows the verdict, the cleaned question and each hit with confidence, relevance and matched terms', async () => {
    server = serveKnowledge({
      'GET /api/project/p1/balance-limit': ok(openLimits),
      'GET /api/project/p1/llm-providers': providers,
      [`GET ${BASE}`]: ok(base),
      [`POST ${BASE}/hit-test`]: (request) =>
        (request.body as { query: string }).query === '喂你好，周末有人吗'
          ? ok(result)
          : ok({
              ...result,
              segments: [],
              confidence: 0,
              verdict: 'no_match',
              answered: false,
              mode: 'hybrid',
            }),
    });
    renderKnowledge('/knowledge/kb1?tab=hit-test');

    const query = await screen.findByLabelText('测试问题');
    fireEvent.click(screen.getByRole('button', { name: '测试' }));
    expect(await screen.findByText('请输入测试问题')).toBeTruthy();

    fireEvent.change(query, { target: { value: '  喂你好，周末有人吗 ' } });
    fireEvent.change(screen.getByLabelText('召回条数'), { target: { value: '3' } });
    fireEvent.click(screen.getByRole('button', { name: '测试' }));

    const results = await screen.findByRole('region', { name: '命中结果' });
    expect(within(results).getByText('可回答')).toBeTruthy();
    expect(within(results).getByText('置信度 0.82，阈值 0.30')).toBeTruthy();

    const analysis = within(results).getByRole('region', { name: '问题分析' });
    expect(within(analysis).getByText('喂你好，周末有人吗')).toBeTruthy();
    // Fillers are shown struck through, not silently dropped.
    expect(within(analysis).getByText('喂').tagName).toBe('DEL');
    expect(within(analysis).getByText('你好').tagName).toBe('DEL');
    expect(within(analysis).getByText('周末有人吗')).toBeTruthy();
    expect(within(analysis).queryByText('大模型改写')).toBeNull();

    expect(within(results).getByText('全文检索')).toBeTruthy();
    expect(within(results).getByText('命中 2 个分段，耗时 12 ms')).toBeTruthy();
    const items = within(results).getAllByRole('listitem');
    expect(items).toHaveLength(2);
    const [first, second] = items as [HTMLElement, HTMLElement];
    expect(within(first).getByText('#1')).toBeTruthy();
    expect(within(first).getByText('0.82')).toBeTruthy();
    expect(within(first).getByText('相关度 0.80')).toBeTruthy();
    expect(within(first).getByText('周六上午有人值班。')).toBeTruthy();
    const firstTerms = within(first).getByRole('group', { name: '匹配的词' });
    expect(within(firstTerms).getByText('周末 0.55')).toBeTruthy();
    // Matched through the dictionary: the caller's word, then the segment's.
    expect(within(firstTerms).getByText('有人→上班 0.25')).toBeTruthy();
    expect(within(first).queryByRole('group', { name: '未匹配的词' })).toBeNull();
    expect(within(first).queryByText('低于阈值')).toBeNull();

    expect(within(second).getByText('0.21')).toBeTruthy();
    expect(within(second).getByText('相关度 0.50')).toBeTruthy();
    expect(within(second).getByText('低于阈值')).toBeTruthy();
    expect(within(second).getByText('退换货政策.pdf')).toBeTruthy();
    expect(within(within(second).getByRole('group', { name: '未匹配的词' })).getByText('周末')).toBeTruthy();
    expect(within(second).queryByText(/^重排第/)).toBeNull();

    expect(server.requests.find((r) => r.method === 'POST')?.body).toEqual({
      query: '喂你好，周末有人吗',
      topK: 3,
      scoreThreshold: 0.3,
    });

    fireEvent.change(query, { target: { value: '火星发货吗' } });
    fireEvent.click(screen.getByRole('button', { name: '测试' }));
    expect(await screen.findByText(/^未命中任何分段/)).toBeTruthy();
    expect(screen.getByText('未找到相关内容，拒答')).toBeTruthy();
    expect(screen.getByText('混合检索')).toBeTruthy();
  });

  it('sends the threshold and a model profile, and shows the refusal, the rewrite, its times and the re-rank', async () => {
    server = serveKnowledge({
      'GET /api/project/p1/balance-limit': ok(openLimits),
      'GET /api/project/p1/llm-providers': providers,
      [`GET ${BASE}`]: ok(base),
      [`POST ${BASE}/hit-test`]: ok(refused),
    });
    renderKnowledge('/knowledge/kb1?tab=hit-test');

    fireEvent.change(await screen.findByLabelText('测试问题'), { target: { value: '那个猫一直闪红灯咋整' } });
    const threshold = screen.getByLabelText('置信度阈值');
    expect((threshold as HTMLInputElement).value).toBe('0.30');
    fireEvent.change(threshold, { target: { value: '0.5' } });
    fireEvent.mouseDown(screen.getByRole('combobox', { name: /^大模型改写与重排/ }));
    fireEvent.click(await screen.findByTitle('通义千问（qwen-turbo）'));
    fireEvent.click(screen.getByRole('button', { name: '测试' }));

    const results = await screen.findByRole('region', { name: '命中结果' });
    expect(within(results).getByText('置信度不足，拒答')).toBeTruthy();
    expect(within(results).getByText('置信度 0.21，阈值 0.50')).toBeTruthy();
    expect(within(results).getByText(/助手不会用这些分段作答/)).toBeTruthy();

    const analysis = within(results).getByRole('region', { name: '问题分析' });
    expect(within(analysis).getByText('那个').tagName).toBe('DEL');
    expect(within(analysis).getByText('猫→光猫')).toBeTruthy();
    expect(within(analysis).getByText('光猫一直闪红灯咋整')).toBeTruthy();
    expect(within(analysis).getByText('光猫一直闪红灯怎么办？')).toBeTruthy();
    expect(within(analysis).getByText('改写 413 ms · 重排 388 ms')).toBeTruthy();

    const [hit] = within(results).getAllByRole('listitem') as [HTMLElement];
    expect(within(hit).getByText('重排第 1')).toBeTruthy();
    expect(
      within(within(hit).getByRole('group', { name: '匹配的词' })).getByText('猫→光猫 0.60'),
    ).toBeTruthy();

    expect(server.requests.find((r) => r.method === 'POST')?.body).toEqual({
      query: '那个猫一直闪红灯咋整',
      topK: 5,
      scoreThreshold: 0.5,
      llmProviderId: 'lp1',
    });
  });

  it('says why the model steps did not run', async () => {
    server = serveKnowledge({
      'GET /api/project/p1/balance-limit': ok(openLimits),
      'GET /api/project/p1/llm-providers': providers,
      [`GET ${BASE}`]: ok(base),
      [`POST ${BASE}/hit-test`]: ok({
        ...result,
        rewriteMs: 1500,
        llmNotice: '大模型改写超时（超过 1.5 秒），已按原话检索',
      }),
    });
    renderKnowledge('/knowledge/kb1?tab=hit-test');

    fireEvent.change(await screen.findByLabelText('测试问题'), { target: { value: '周末有人吗' } });
    fireEvent.change(screen.getByLabelText('置信度阈值'), { target: { value: '' } });
    fireEvent.click(screen.getByRole('button', { name: '测试' }));
    expect(await screen.findByText('置信度阈值须为数字')).toBeTruthy();
    expect(server.requests.some((r) => r.method === 'POST')).toBe(false);

    fireEvent.change(screen.getByLabelText('置信度阈值'), { target: { value: '0.3' } });
    fireEvent.click(screen.getByRole('button', { name: '测试' }));
    const analysis = await screen.findByRole('region', { name: '问题分析' });
    expect(within(analysis).getByText('大模型改写超时（超过 1.5 秒），已按原话检索')).toBeTruthy();
    expect(within(analysis).getByText('改写 1500 ms')).toBeTruthy();
  });

  it('shows in the header whether the base is calibrated, and explains calibration', async () => {
    server = serveKnowledge({
      'GET /api/project/p1/balance-limit': ok(openLimits),
      [`GET ${BASE}`]: ok(
        makeBase({
          calibration: {
            cut: 0.42,
            positives: 96,
            negatives: 24,
            recall: 0.91,
            wrongRate: 0.035,
            usesDefault: false,
            computedAt: '2026-03-01T02:00:00.000Z',
          },
        }),
      ),
      [`GET ${ROOT}/kb2`]: ok(makeBase({ id: 'kb2', name: '新知识库' })),
      [`GET ${ROOT}/kb3`]: ok(
        makeBase({
          id: 'kb3',
          name: '小知识库',
          calibration: {
            cut: 0.3,
            positives: 3,
            negatives: 1,
            recall: 1,
            wrongRate: 0,
            usesDefault: true,
            computedAt: '2026-03-01T02:00:00.000Z',
          },
        }),
      ),
    });
    const router = renderKnowledge('/knowledge/kb1');

    expect(await screen.findByText('已校准：探测问题 120 条，误答率 3.5%')).toBeTruthy();
    const info = screen.getByRole('img', { name: '什么是校准' });
    fireEvent.mouseEnter(info);
    const tip = await screen.findByRole('tooltip');
    expect(tip.textContent).toMatch(/探测问题/);
    expect(tip.textContent).toContain('正确答案保留 91%，误答 3.5%');
    fireEvent.mouseLeave(info);

    await act(() => router.navigate('/knowledge/kb2'));
    expect(await screen.findByText('新知识库')).toBeTruthy();
    expect(screen.getByText('未校准（使用默认值）')).toBeTruthy();

    await act(() => router.navigate('/knowledge/kb3'));
    expect(await screen.findByText('小知识库')).toBeTruthy();
    expect(screen.getByText('未校准（使用默认值）')).toBeTruthy();
    fireEvent.mouseEnter(screen.getByRole('img', { name: '什么是校准' }));
    await waitFor(() =>
      expect(screen.getAllByRole('tooltip').some((t) => t.textContent?.includes('探测问题只有 4 条'))).toBe(
        true,
      ),
    );
  });

  it('says the base does not exist for an unknown or foreign id', async () => {
    server = serveKnowledge({
      'GET /api/project/p1/balance-limit': ok(openLimits),
    });
    renderKnowledge('/knowledge/kb404');

    expect(await screen.findByText('知识库不存在或已被删除')).toBeTruthy();
    expect(screen.getByRole('link', { name: '返回知识库列表' }).getAttribute('href')).toBe('/knowledge/list');
  });

  it('exports the base in the chosen format and saves the file', async () => {
    server = serveKnowledge({
      'GET /api/project/p1/balance-limit': ok(openLimits),
      [`GET ${BASE}`]: ok(base),
      [`GET ${BASE}/documents`]: ok(paged([makeDocument()], 1)),
      [`GET ${BASE}/export`]: ok('问题,答案'),
    });
    // jsdom has no object URLs and does not navigate; the saved file is what the link asked for.
    Object.assign(URL, { createObjectURL: vi.fn(() => 'blob:export'), revokeObjectURL: vi.fn() });
    const saved: string[] = [];
    vi.spyOn(HTMLAnchorElement.prototype, 'click').mockImplementation(function (this: HTMLAnchorElement) {
      saved.push(`${this.download} ${this.href}`);
    });
    renderKnowledge('/knowledge/kb1');

    fireEvent.click(await screen.findByRole('button', { name: '导出' }));
    fireEvent.click(await screen.findByText('CSV (.csv)'));

    await waitFor(() => expect(saved).toEqual(['售后常见问题.csv blob:export']));
    const exportCall = server.requests.find((r) => r.url === `${BASE}/export`);
    expect(exportCall?.config.params).toEqual({ format: 'csv' });
    expect(exportCall?.headers.Authorization).toBe('Bearer tok-1');
  });
});
