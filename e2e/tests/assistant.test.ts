import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { launchBrowser } from '../support/browser';
import { expectVisible, openLoggedIn, textOf } from '../support/console';
import { login } from '../support/server';

const baseUrl = inject('baseUrl');
let browser: Browser;
let context: BrowserContext | undefined;

// The 客户回访 template's opening line, with its variables' sample values (王先生, 星河宽带, 千兆宽带套餐).
const OPENING_LINE =
  '您好，请问是王先生吗？我是星河宽带的客服小安，想占用您一分钟，回访一下您最近使用千兆宽带套餐的情况，请问现在方便吗？';
// The demo project's knowledge base and the one document in it (apps/server/src/modules/demo/).
const DEMO_BASE = '星河宽带常见问题';
const DEMO_DOCUMENT = '宽带业务常见问题.md';
// The assistant's default 拒绝后回复.
const OPT_OUT_REPLY = '好的，很抱歉打扰您了，以后不会再给您致电，再见！';
const LATENCY = /^检索 \d+ ms · 首字 \d+ ms · 总计 \d+ ms$/;

beforeAll(async () => {
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
});
afterEach(async () => {
  await context?.close();
  context = undefined;
});

async function open(): Promise<Page> {
  const opened = await openLoggedIn(browser, baseUrl, inject('demoEmail'), inject('demoPassword'));
  context = opened.context;
  return opened.page;
}

/** Creates an assistant from the 客户回访 template through the API, as the template page does. */
async function createFollowUpAssistant(name: string): Promise<string> {
  const token = await login(baseUrl, inject('demoEmail'), inject('demoPassword'));
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  const me = (await (await fetch(`${baseUrl}/api/user/current`, { headers })).json()) as {
    data: { projects: { id: string }[] };
  };
  const projectId = me.data.projects[0]!.id;
  const res = await fetch(`${baseUrl}/api/project/${projectId}/assistants`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ name, use: 'outbound', templateKey: 'customer-follow-up' }),
  });
  const body = (await res.json()) as { data: { id: string } };
  if (!res.ok) throw new Error(`creating the assistant failed: ${JSON.stringify(body)}`);
  return body.data.id;
}

/** The editor's test chat: its conversation log, the customer's input and the buttons. */
function testChat(p: Page) {
  const panel = p.getByRole('region', { name: '测试对话' });
  return {
    panel,
    log: panel.getByRole('log', { name: '对话内容' }),
    input: panel.getByLabel('以客户身份输入'),
    send: panel.getByRole('button', { name: '发送', exact: true }),
    reset: panel.getByRole('button', { name: '重置对话', exact: true }),
  };
}

/** Waits for the conversation to open with the assistant's first line, and only that. */
async function expectOpeningOnly(chat: ReturnType<typeof testChat>) {
  await expectVisible(chat.log.getByText(OPENING_LINE, { exact: true }), 'the opening line', 15_000);
  await expect.poll(() => chat.log.getByText(LATENCY).count()).toBe(1);
  expect(await textOf(chat.log)).toMatch(
    new RegExp(`^${OPENING_LINE}检索 \\d+ ms · 首字 \\d+ ms · 总计 \\d+ ms`),
  );
}

describe('assistants', () => {
  it('creates an assistant from a template, links the demo knowledge base and answers from it', async () => {
    const p = await open();
    await p.getByRole('link', { name: '智能小助手', exact: true }).click();
    await p.waitForURL((url) => url.pathname === '/assistant/list');
    await p.getByRole('button', { name: '从模板创建', exact: true }).click();
    await p.waitForURL((url) => url.pathname === '/assistant/template');
    await expectVisible(p.getByRole('heading', { name: '从模板创建' }), 'the template page');

    // The 客户回访 card shows what it is for and how it opens; 使用此模板 creates and opens it.
    const card = p.locator('.ant-card').filter({ has: p.getByText('客户回访', { exact: true }) });
    await expectVisible(card, 'the 客户回访 template card');
    expect(await textOf(card)).toContain('开场白：您好，请问是{{客户姓名}}吗？');
    await card.getByRole('button', { name: '使用此模板' }).click();
    await p.waitForURL((url) => url.pathname === '/assistant/edit' && url.searchParams.has('id'));
    await expectVisible(p.getByRole('heading', { name: '编辑小助手' }), 'the editor');
    const assistantId = new URL(p.url()).searchParams.get('id');
    expect(await p.getByLabel('名称', { exact: true }).inputValue()).toBe('客户回访');
    expect(await p.getByText('未发布', { exact: true }).isVisible()).toBe(true);

    const chat = testChat(p);
    await expectOpeningOnly(chat);

    // Link the demo FAQ through the multi-select (searchable: type, then Enter), then save.
    const bases = p.getByLabel('关联知识库');
    await bases.click();
    await bases.fill('星河宽带');
    await p.keyboard.press('Enter');
    await p.keyboard.press('Escape');
    const linked = p.getByText(new RegExp(`^${DEMO_BASE}（(\\d+) 段）$`)).filter({ visible: true });
    await expectVisible(linked, 'the linked knowledge base');
    // The demo base was indexed at the server's first start, so it has segments to answer from.
    const segmentCount = Number(/（(\d+) 段）/.exec(await textOf(linked))?.[1]);
    expect(segmentCount).toBeGreaterThan(0);
    await expectVisible(p.getByText('未保存', { exact: true }), 'the 未保存 tag');
    // Saving starts the conversation over on the saved configuration.
    const reopened = p.waitForResponse((res) => res.url().endsWith(`/assistants/${assistantId}/test-chat`));
    await p.getByRole('button', { name: '保存', exact: true }).click();
    await expectVisible(p.getByText('已保存', { exact: true }), 'the saved toast');
    await reopened;
    await expect.poll(() => p.getByText('未保存', { exact: true }).count()).toBe(0);
    await expectOpeningOnly(chat);

    // A question the FAQ answers: the reply comes from it, with the segments used and the timings.
    await chat.input.fill('移机要收费吗');
    await chat.send.click();
    await expectVisible(chat.log.getByText('移机要收费吗', { exact: true }), 'the customer line');
    await expect.poll(() => chat.log.getByText(LATENCY).count(), { timeout: 15_000 }).toBe(2);
    // Visible only: the segments under the reply (folded) hold the same words.
    const reply = chat.log.getByText(/同城移机免收移机费/).filter({ visible: true });
    await expectVisible(reply, 'the answer from the FAQ');
    const replyText = await textOf(reply);
    expect(replyText).toContain('每年可免费移机 2 次，第 3 次起每次收取 50 元');
    // Read out on a call: no Markdown marks.
    expect(replyText).not.toContain('**');

    const used = chat.log.getByText(/^引用知识（\d+）$/);
    await expectVisible(used, 'the knowledge used');
    const sources = chat.log.getByText(
      new RegExp(`^${DEMO_DOCUMENT.replace('.', '\\.')} · 置信度 \\d\\.\\d\\d$`),
    );
    const usedCount = Number(/（(\d+)）/.exec(await textOf(used))?.[1]);
    expect(usedCount).toBeGreaterThan(0);
    expect(await sources.count()).toBe(usedCount);
    // The best segment is the FAQ's answer about moving, above the template's 0.3 threshold.
    const best = sources.first();
    expect(Number((await textOf(best)).split('置信度 ')[1])).toBeGreaterThanOrEqual(0.3);
    // The knowledge judged it answerable, as a call would.
    await expectVisible(chat.log.getByText(/^置信度 \d\.\d\d · 可回答$/), 'the verdict under the reply');
    await best.click();
    const bestContent = chat.log
      .locator('details')
      .first()
      .getByText(/搬家了怎么移机/);
    await expectVisible(bestContent, 'the segment text under the reply');
    expect(await textOf(bestContent)).toContain('同城移机免收移机费');
    expect(await textOf(chat.log.getByText(LATENCY).nth(1))).toMatch(LATENCY);
    expect(await chat.input.inputValue()).toBe('');
    expect(await chat.input.isEnabled()).toBe(true);
  });

  it('ends the test call when the customer asks not to be called again, until 重置对话', async () => {
    const id = await createFollowUpAssistant(`免打扰测试-${Date.now()}`);
    const p = await open();
    await p.goto(`/assistant/edit?id=${id}`);
    const chat = testChat(p);
    await expectOpeningOnly(chat);

    await chat.input.fill('别再给我打电话了');
    await chat.input.press('Enter');
    await expectVisible(chat.log.getByText('别再给我打电话了', { exact: true }), 'the customer line');
    await expect.poll(() => chat.log.getByText(LATENCY).count(), { timeout: 15_000 }).toBe(2);
    // The assistant apologises, puts the number on the do-not-call list and hangs up.
    // Compared as the whole conversation, so a failure shows what the assistant said instead.
    expect(await textOf(chat.log)).toContain(`别再给我打电话了${OPT_OUT_REPLY}`);
    expect(await chat.log.getByText(OPT_OUT_REPLY, { exact: true }).isVisible()).toBe(true);
    const notes = chat.log.getByRole('note');
    expect(await notes.count()).toBe(2);
    expect(await textOf(notes.nth(0))).toMatch(/^—— 已加入免打扰：客户要求不再来电：「.+」 ——$/);
    expect(await textOf(notes.nth(1))).toBe('—— 结束通话：客户拒绝 ——');
    expect(await chat.log.getByText('意向 D 明确拒绝', { exact: true }).isVisible()).toBe(true);

    // The call is over: nothing more can be said until the conversation is reset.
    await expect.poll(() => chat.input.isDisabled()).toBe(true);
    expect(await chat.input.getAttribute('placeholder')).toBe('通话已结束，请重置对话');
    expect(await chat.send.isDisabled()).toBe(true);

    await chat.reset.click();
    await expectOpeningOnly(chat);
    expect(await chat.log.getByText('别再给我打电话了').count()).toBe(0);
    expect(await chat.log.getByRole('note').count()).toBe(0);
    expect(await chat.input.isEnabled()).toBe(true);
    await chat.input.fill('你好');
    expect(await chat.send.isEnabled()).toBe(true);
  });

  it('publishes a version with a note and lists it in 版本记录', async () => {
    const id = await createFollowUpAssistant(`发布测试-${Date.now()}`);
    const p = await open();
    await p.goto(`/assistant/edit?id=${id}`);
    await expectVisible(p.getByRole('heading', { name: '编辑小助手' }), 'the editor');
    expect(await p.getByText('未发布', { exact: true }).isVisible()).toBe(true);

    // No version yet.
    await p.getByRole('button', { name: '版本记录', exact: true }).click();
    let drawer = p.getByRole('dialog', { name: '版本记录' });
    await expectVisible(drawer.getByText('还没有发布过版本', { exact: true }), 'the empty history');
    await p.keyboard.press('Escape');
    await expect.poll(() => drawer.isVisible()).toBe(false);

    const note = '首个版本：回访话术定稿';
    await p.getByRole('button', { name: '发布', exact: true }).click();
    const modal = p.getByRole('dialog', { name: '发布新版本' });
    await expectVisible(modal, 'the publish dialog');
    await modal.getByLabel('版本说明').fill(note);
    await modal.getByRole('button', { name: '发布', exact: true }).click();
    await expectVisible(p.getByText('已发布新版本', { exact: true }), 'the published toast');
    await expect.poll(() => modal.isVisible()).toBe(false);
    await expectVisible(p.getByText('已发布 v1', { exact: true }), 'the 已发布 v1 tag');
    expect(await p.getByText('未发布', { exact: true }).count()).toBe(0);
    // The test chat can now run the published version as calls will.
    await expectVisible(testChat(p).panel.getByText('测试 v1', { exact: true }), 'the 测试 v1 option');

    await p.getByRole('button', { name: '版本记录', exact: true }).click();
    drawer = p.getByRole('dialog', { name: '版本记录' });
    const versions = drawer.getByRole('list', { name: '版本列表' }).getByRole('listitem');
    await expect.poll(() => versions.count(), { timeout: 10_000 }).toBe(1);
    const v1 = versions.first();
    expect(await v1.getByText('v1', { exact: true }).isVisible()).toBe(true);
    expect(await v1.getByText('当前发布', { exact: true }).isVisible()).toBe(true);
    expect(await v1.getByText(note, { exact: true }).isVisible()).toBe(true);
    expect(await textOf(v1.getByText(/ · /))).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2} · 演示用户$/);
    expect(await v1.getByRole('button', { name: '回滚到此版本' }).isVisible()).toBe(true);
  });
});
