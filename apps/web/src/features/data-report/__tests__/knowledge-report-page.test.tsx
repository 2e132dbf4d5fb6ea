import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import { afterEach, describe, expect, it } from 'vitest';
import { ok } from '@/test/fake-server';
import { renderApp } from '@/test/render-route';
import { makeGapTopic, makeKnowledgeReport, REPORTS, serveReports } from './data-report-fixtures';

let server: ReturnType<typeof serveReports> | undefined;
afterEach(() => {
  server?.stop();
  server = undefined;
});

const KNOWLEDGE = `${REPORTS}/knowledge`;
const GAPS = `${REPORTS}/knowledge/gaps`;

function serveGaps(
  initial = [makeGapTopic(), makeGapTopic({ id: 'c2:1', question: '周末上课吗', suggestedPair: null })],
) {
  let topics = initial;
  const resolved: unknown[] = [];
  server = serveReports({
    [`GET ${KNOWLEDGE}`]: ok(makeKnowledgeReport()),
    [`GET ${GAPS}`]: () => ok({ topics, total: topics.length }),
    [`POST ${GAPS}/resolve`]: (request) => {
      resolved.push(request.body);
      const { topicId } = request.body as { topicId: string };
      topics = topics.filter((topic) => topic.id !== topicId);
      return ok({ resolved: true });
    },
  });
  return resolved;
}

/**
 * The open dialog, found by its title: antd labels it by an id that is not unique in tests
 * (several components share the test build's fixed id), so its accessible name is unreliable.
 */
async function openDialog(title: string) {
  const dialog = await screen.findByRole('dialog');
  expect(within(dialog).getByText(title, { selector: '.ant-modal-title' })).toBeTruthy();
  return dialog;
}

const topic = (question: string) => screen.getByRole('listitem', { name: question });

describe('知识库统计', () => {
  it('adds a gap question as a similar question of the suggested pair, after which the topic leaves the list', async () => {
    const resolved = serveGaps();
    renderApp('/data-report/knowledge?from=2026-11-18&to=2026-11-24');

    expect(await screen.findByText('可以分期付款吗', undefined, { timeout: 15_000 })).toBeTruthy();
    expect(screen.getByText('命中最多的内容')).toBeTruthy();
    expect(
      within(topic('可以分期付款吗')).getByRole('link', { name: '“你们能分期吗”' }).getAttribute('href'),
    ).toBe('/call-record/detail/c1?turn=3');
    // Nothing close enough to add it to: only a new pair will do.
    expect(
      within(topic('周末上课吗')).getByRole('button', { name: '添加为相似问' }).hasAttribute('disabled'),
    ).toBe(true);

    fireEvent.click(within(topic('可以分期付款吗')).getByRole('button', { name: '添加为相似问' }));
    const dialog = await openDialog('添加为相似问');
    expect(within(dialog).getByText(/怎么付款/)).toBeTruthy();
    const question = within(dialog).getByLabelText('相似问') as HTMLInputElement;
    expect(question.value).toBe('可以分期付款吗');
    fireEvent.change(question, { target: { value: '能不能分期付款' } });
    fireEvent.click(within(dialog).getByRole('button', { name: '保存' }));

    await waitFor(() =>
      expect(resolved).toEqual([
        { as: 'similar', topicId: 'c1:3', documentId: 'd7', segmentId: 's9', question: '能不能分期付款' },
      ]),
    );
    await waitFor(() => expect(screen.queryByText('可以分期付款吗')).toBeNull());
    expect(screen.getByText('周末上课吗')).toBeTruthy();
  });

  it('writes a new question-and-answer pair for a gap, refusing an empty answer', async () => {
    const resolved = serveGaps();
    renderApp('/data-report/knowledge');
    await screen.findByText('周末上课吗', undefined, { timeout: 15_000 });

    fireEvent.click(within(topic('周末上课吗')).getByRole('button', { name: '新建问答对' }));
    const dialog = await openDialog('新建问答对');
    fireEvent.click(within(dialog).getByRole('button', { name: '保存' }));
    expect(await within(dialog).findByText('请输入答案')).toBeTruthy();
    expect(resolved).toEqual([]);

    fireEvent.change(within(dialog).getByLabelText('答案'), { target: { value: '周六日都有班。' } });
    fireEvent.click(within(dialog).getByRole('button', { name: '保存' }));
    await waitFor(() =>
      expect(resolved).toEqual([
        {
          as: 'pair',
          topicId: 'c2:1',
          knowledgeBaseId: 'kb1',
          question: '周末上课吗',
          answer: '周六日都有班。',
        },
      ]),
    );
    await waitFor(() => expect(screen.queryByText('周末上课吗')).toBeNull());
  });

  it('says what to do when no caller asked the knowledge bases anything', async () => {
    server = serveReports({
      [`GET ${KNOWLEDGE}`]: ok(makeKnowledgeReport(0)),
      [`GET ${GAPS}`]: ok({ topics: [], total: 0 }),
    });
    renderApp('/data-report/knowledge');

    expect(
      await screen.findByText(/还没有知识库提问：为小助手关联知识库后/, undefined, { timeout: 15_000 }),
    ).toBeTruthy();
    expect(screen.getByRole('link', { name: '去知识库' }).getAttribute('href')).toBe('/knowledge');
    expect(await screen.findByText(/没有未解答的问题/)).toBeTruthy();
  });
});
