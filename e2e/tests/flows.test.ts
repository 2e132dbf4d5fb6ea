import type { CallDetail, FlowDetail, ProjectNumber } from '@callpilot/contracts';
import type { Browser, BrowserContext, Locator, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { launchBrowser } from '../support/browser';
import { chooseOption, expectVisible, openLoggedIn, textOf } from '../support/console';
import { openProjectApi, type ProjectApi } from '../support/project-api';

// Issue 15's "Done when": a small flow built from the palette in the browser, refused by the rules
// and fixed through the issue's link, simulated, published, bound to a number, called through
// 模拟来电, and its path read on the call detail page.

const baseUrl = inject('baseUrl');
let browser: Browser;
let context: BrowserContext | undefined;
let api: ProjectApi;

const FLOW_NAME = `E2E 热线 ${Date.now() % 100_000}`;
// A number of this test's own: the demo's numbers answer the other tests' calls.
const NUMBER = `0216099${String(Date.now() % 10_000).padStart(4, '0')}`;

beforeAll(async () => {
  browser = await launchBrowser();
  api = await openProjectApi(baseUrl, inject('demoEmail'), inject('demoPassword'));
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

const NODE_CLASS: Record<string, string> = { 开始: 'start', 按键菜单: 'menu', 放音: 'play', 挂机: 'hangup' };
/** The canvas node of a type (the test's flow has one of each). */
const canvasNode = (p: Page, type: string) => p.locator(`.react-flow__node-${NODE_CLASS[type]}`);

/** Whether no two nodes of the canvas overlap (the auto layout has been applied). */
async function nodesApart(p: Page): Promise<boolean> {
  const boxes = await p
    .locator('.react-flow__node')
    .evaluateAll((nodes) => nodes.map((n) => n.getBoundingClientRect().toJSON() as DOMRect));
  return boxes.every((a, i) =>
    boxes.every(
      (b, j) => j <= i || a.right <= b.left || b.right <= a.left || a.bottom <= b.top || b.bottom <= a.top,
    ),
  );
}

/** Drags from one node's exit to another node's entry, as a user draws an edge. */
async function connect(p: Page, from: Locator, exit: string, to: Locator) {
  const source = from.getByLabel(`出口：${exit}`, { exact: true });
  const target = to.getByLabel('入口', { exact: true });
  const a = await source.boundingBox();
  const b = await target.boundingBox();
  if (!a || !b) throw new Error(`exit ${exit} or its target is not on screen`);
  await p.mouse.move(a.x + a.width / 2, a.y + a.height / 2);
  await p.mouse.down();
  // Several steps: React Flow starts a connection on movement, and snaps to the handle near the end.
  await p.mouse.move((a.x + b.x) / 2, (a.y + b.y) / 2, { steps: 5 });
  await p.mouse.move(b.x + b.width / 2, b.y + b.height / 2, { steps: 5 });
  await p.mouse.up();
}

const issues = (p: Page) => p.getByRole('region', { name: '问题' });

describe('通话流程', () => {
  it('builds a flow from the palette, fixes it via the rules, simulates, publishes, binds a number and reads a call’s path', async () => {
    const p = await open();
    // A canvas roomy enough that no node sits under the minimap's corner.
    await p.setViewportSize({ width: 1920, height: 1200 });

    // 1. The list, then a new flow: the editor opens on its 开始 node.
    await p.goto(`${baseUrl}/ivr/list`);
    await expectVisible(p.getByRole('heading', { name: '通话流程' }), 'the flow list');
    await p.getByRole('button', { name: '新建流程' }).first().click();
    const create = p.getByRole('dialog', { name: '新建流程' });
    await create.getByLabel('流程名称', { exact: true }).fill(FLOW_NAME);
    await create.getByRole('button', { name: '创建并编辑' }).click();
    await p.waitForURL(/\/ivr\/edit\//);
    const flowId = decodeURIComponent(p.url().split('/ivr/edit/')[1] ?? '');
    await expectVisible(canvasNode(p, '开始'), 'the start node');

    // 2. From the palette: a menu, a prompt and a hang-up, laid out so none covers another.
    const palette = p.getByLabel('节点库', { exact: true });
    for (const type of ['按键菜单', '放音', '挂机']) {
      await palette.getByRole('button', { name: `添加${type}` }).click();
      await expectVisible(canvasNode(p, type), `the new ${type} node`);
    }
    // Added ones cascade over each other: laid out (dagre loads on first use), then all in view,
    // with the problems panel folded while edges are drawn.
    await p.getByRole('button', { name: '自动布局' }).click();
    await expect.poll(() => nodesApart(p), { timeout: 10_000 }).toBe(true);
    const problemsToggle = issues(p).locator('button[aria-expanded]');
    await problemsToggle.click();
    await p.getByRole('button', { name: '适应画布' }).click();
    // A new menu offers keys 1 and 2.
    await canvasNode(p, '按键菜单').click();
    const panel = p.getByRole('complementary', { name: '节点设置' });
    await expect.poll(() => panel.getByLabel(/^按键 \d+$/).count()).toBe(2);
    await p.getByRole('button', { name: '适应画布' }).click();

    const start = canvasNode(p, '开始');
    const menu = canvasNode(p, '按键菜单');
    const play = canvasNode(p, '放音');
    const hangup = canvasNode(p, '挂机');
    await connect(p, start, '下一步', menu);
    await connect(p, menu, '按 1', play);
    await connect(p, play, '下一步', hangup);
    await connect(p, menu, '按 2', hangup);
    await connect(p, menu, '输入错误', hangup);
    await connect(p, menu, '超时', hangup);
    await expect.poll(() => p.locator('.react-flow__edge').count(), { timeout: 10_000 }).toBe(6);

    // 3. The rules refuse it: the prompts are empty. The issue's link opens the node to fix it.
    await problemsToggle.click();
    const menuIssue = issues(p).getByText('「按键菜单」：请填写菜单提示音');
    await expectVisible(menuIssue, 'the menu prompt issue');
    await menuIssue.click();
    await panel.getByLabel('菜单提示音', { exact: true }).fill('账单查询请按 1，其他业务请按 2。');
    const playIssue = issues(p).getByText('「放音」：请填写放音内容或上传音频');
    await playIssue.click();
    await panel.getByLabel('放音内容', { exact: true }).fill('您的账单已通过短信发送，号码 {{caller}}。');
    await expectVisible(issues(p).getByText('流程检查通过，可以发布'), 'a clean flow');
    await p.getByRole('button', { name: '保存' }).click();
    await expect
      .poll(async () => (await api.get<FlowDetail>(`/flows/${flowId}`)).draft.nodes.length, {
        timeout: 10_000,
      })
      .toBe(4);

    // 4. Simulated in the browser: key 1 takes the 放音 branch, then the call hangs up.
    await p.getByRole('button', { name: /(^|\s)模拟$/ }).click();
    const simulator = p.getByRole('dialog', { name: '模拟运行' });
    await simulator.getByRole('button', { name: '开始模拟' }).click();
    const pad = simulator.getByRole('group', { name: '拨号盘' });
    await expectVisible(pad, 'the dial pad while the menu waits');
    await pad.getByRole('button', { name: '1', exact: true }).click();
    const log = simulator.getByRole('list', { name: '步骤记录' });
    await expect.poll(() => textOf(log), { timeout: 10_000 }).toContain('挂机');
    const logText = await textOf(log);
    expect(logText).toContain('输入：1');
    expect(logText.indexOf('按键菜单')).toBeLessThan(logText.indexOf('放音'));
    await simulator.getByRole('button', { name: '关闭', exact: true }).first().click();

    // 5. Published as v1.
    await p.getByRole('button', { name: /(^|\s)发布$/ }).click();
    const publish = p.getByRole('dialog', { name: `发布流程「${FLOW_NAME}」` });
    await publish.getByLabel('发布说明').fill('E2E 首次发布');
    await publish.getByRole('button', { name: /^发\s*布$/ }).click();
    await expect
      .poll(async () => (await api.get<FlowDetail>(`/flows/${flowId}`)).publishedVersion, { timeout: 10_000 })
      .toBe(1);

    // 6. A number answers with it (号码管理 › 呼入设置).
    await api.call('POST', '/numbers', { number: NUMBER, label: 'E2E 流程热线' });
    await p.goto(`${baseUrl}/ivr/numbers`);
    const row = p.locator('.ant-table-tbody tr[data-row-key]').filter({ hasText: NUMBER });
    await expectVisible(row, 'the new number');
    await row.getByRole('button', { name: '呼入设置', exact: true }).click();
    const bind = p.getByRole('dialog', { name: `呼入设置 · ${NUMBER}` });
    await bind.locator('.ant-radio-button-wrapper').filter({ hasText: '通话流程' }).click();
    // Typed into the search first: the demo's flows are listed too, and the list is virtual.
    await bind.getByLabel('接听流程', { exact: true }).click();
    await p.keyboard.type(FLOW_NAME);
    const flowOption = p
      .locator('.ant-select-dropdown .ant-select-item-option')
      .filter({ visible: true })
      .filter({ hasText: FLOW_NAME });
    await expectVisible(flowOption.first(), 'the published flow among the options');
    await flowOption.first().click();
    await bind.getByRole('button', { name: '保存', exact: true }).click();
    await expect
      .poll(
        async () =>
          (await api.get<ProjectNumber[]>('/numbers')).find((n) => n.number === NUMBER)?.inboundFlowId,
      )
      .toBe(flowId);

    // 7. 模拟来电 to the number: the flow answers.
    await row.getByRole('button', { name: '模拟来电', exact: true }).click();
    const dialog = p.getByRole('dialog', { name: '模拟来电' });
    await chooseOption(p, dialog.getByLabel('模拟客户', { exact: true }), '有意向的客户');
    const started = p.waitForResponse((res) => res.url().endsWith('/calls/test-inbound') && res.ok());
    await dialog.getByRole('button', { name: '开始模拟', exact: true }).click();
    const callId = ((await (await started).json()) as { data: { callId: string } }).data.callId;
    await expect
      .poll(async () => (await api.get<CallDetail>(`/calls/${encodeURIComponent(callId)}`)).status, {
        timeout: 60_000,
      })
      .toBe('ended');

    // 8. The call's path on its detail page, beside the transcript.
    const recorded = await api.get<CallDetail>(`/calls/${encodeURIComponent(callId)}`);
    expect(recorded.flow).toMatchObject({ flowId, flowName: FLOW_NAME, flowVersion: 1 });
    expect(recorded.flow?.steps.slice(0, 2).map((s) => s.nodeType)).toEqual(['start', 'menu']);
    await p.goto(`${baseUrl}/call-record/detail/${encodeURIComponent(callId)}`);
    const path = p.getByRole('list', { name: '流程路径' });
    await expect.poll(() => textOf(path), { timeout: 20_000 }).toContain('按键菜单');
    const shown = await textOf(path);
    expect(shown.indexOf('开始')).toBeLessThan(shown.indexOf('按键菜单'));
    expect(await textOf(p.locator('main'))).toContain(FLOW_NAME);
  });
});
