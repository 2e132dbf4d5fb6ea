import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { Webhook } from 'standardwebhooks';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { launchBrowser } from '../support/browser';
import { expectVisible, openLoggedIn, textOf } from '../support/console';
import { DEMO_ASSISTANT, demoSettled, openProjectApi, type ProjectApi } from '../support/project-api';

/*
 * 开发者选项 end to end: an owner creates an API key (shown once, copied), a webhook endpoint on a
 * local receiver, places a simulated call through /opendock/v1 with the key, receives the call's
 * signed events, finds them in the delivery log and replays one. The e2e server runs with
 * WEBHOOK_ALLOW_PRIVATE=true (support/global-setup.ts): the receiver is on loopback.
 */
const baseUrl = inject('baseUrl');
let browser: Browser;
let context: BrowserContext | undefined;
let api: ProjectApi;

interface Received {
  headers: http.IncomingHttpHeaders;
  body: string;
}
const received: Received[] = [];
let receiver: http.Server;
let receiverUrl: string;

beforeAll(async () => {
  browser = await launchBrowser();
  api = await openProjectApi(baseUrl, inject('demoEmail'), inject('demoPassword'));
  await demoSettled(api, 240_000);
  receiver = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks/callpilot`;
}, 250_000);
afterAll(async () => {
  await browser?.close();
  await new Promise((resolve) => receiver?.close(resolve));
});
afterEach(async () => {
  await context?.close();
  context = undefined;
});

const eventsOf = (callId: string) =>
  received
    .map((r) => ({ ...r, payload: JSON.parse(r.body) as { type: string; data: Record<string, unknown> } }))
    .filter((r) => r.payload.data.id === callId || r.payload.data.callId === callId);

async function createKey(p: Page): Promise<string> {
  await p.goto('/developer-options/keys');
  await p.getByRole('button', { name: '创建密钥' }).first().click();
  const dialog = p.getByRole('dialog').filter({ hasText: '创建密钥' });
  await dialog.getByLabel('名称').fill('CRM 正式环境');
  await dialog.getByRole('radiogroup', { name: '通话（发起单通外呼）' }).getByText('读写').click();
  await dialog.getByRole('radiogroup', { name: '通话记录与录音' }).getByText('只读').click();
  await dialog.getByRole('button', { name: /^创\s*建$|^确\s*定$|^创建密钥$/ }).click();

  const shown = p.getByRole('dialog').filter({ hasText: '已创建' });
  await expectVisible(shown, 'the once-shown secret');
  const secret = await textOf(shown.locator('code').filter({ hasText: /^cp_live_/ }));
  expect(secret).toMatch(/^cp_live_[0-9A-Za-z]{43}$/);
  await shown.getByRole('button', { name: '复制密钥' }).click();
  await expectVisible(shown.getByText('已复制'), '已复制 after copying');
  expect(await p.evaluate(() => navigator.clipboard.readText())).toBe(secret);
  await shown.getByRole('button', { name: '我已保存' }).click();

  // Listed by its last four characters only; the whole key is nowhere on the page any more.
  const row = p.locator('.ant-table-tbody tr').filter({ hasText: 'CRM 正式环境' });
  await expectVisible(row, 'the new key in the list');
  expect(await textOf(row)).toContain(secret.slice(-4));
  expect(await p.content()).not.toContain(secret);
  return secret;
}

async function createEndpoint(p: Page): Promise<string> {
  await p.goto('/developer-options/webhooks');
  await p.getByRole('button', { name: '添加端点' }).first().click();
  const dialog = p.getByRole('dialog').filter({ hasText: '添加端点' });
  await dialog.getByLabel('接收地址').fill(receiverUrl);
  await dialog.getByLabel('描述').fill('e2e 接收端');
  for (const type of ['call.started', 'call.answered', 'call.ended']) {
    await dialog.locator('label.ant-checkbox-wrapper').filter({ hasText: type }).click();
  }
  await dialog.getByRole('button', { name: /^保\s*存$|^确\s*定$|^添\s*加$/ }).click();
  // A new endpoint opens its own page (secret, test events, log).
  await p.waitForURL(/\/developer-options\/webhooks\/[^/]+$/);
  await expectVisible(p.getByText(receiverUrl), 'the endpoint address on its page');
  await p.getByRole('button', { name: '显示' }).click();
  // The masked form (whsec_••••) is replaced by the real one once it is fetched.
  const secret = p.locator('code').filter({ hasText: /^whsec_[A-Za-z0-9+/=]+$/ });
  await expectVisible(secret, 'the signing secret');
  return textOf(secret);
}

describe('开发者选项', () => {
  it('creates a key, places a call through /opendock with it, receives signed webhooks, replays one', async () => {
    ({ context } = await openLoggedIn(browser, baseUrl, inject('demoEmail'), inject('demoPassword')));
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: baseUrl });
    const p = await context.newPage();

    const key = await createKey(p);
    const signingSecret = await createEndpoint(p);
    const endpointUrl = p.url();

    // The customer's system: the key alone decides the project.
    const assistants = await fetch(`${baseUrl}/opendock/v1/assistants`, {
      headers: { authorization: `Bearer ${key}` },
    });
    // The key was given no assistants scope: refused, in Chinese.
    expect(assistants.status).toBe(403);
    expect(((await assistants.json()) as { message: string }).message).toContain('智能小助手');

    const { items } = await api.get<{ items: { id: string; name: string }[] }>(
      '/assistants?page=1&pageSize=50',
    );
    const assistant = items.find((a) => a.name === DEMO_ASSISTANT)!;
    const placed = await fetch(`${baseUrl}/opendock/v1/calls`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${key}`,
        'content-type': 'application/json',
        'idempotency-key': 'e2e-call-1',
      },
      body: JSON.stringify({
        assistantId: assistant.id,
        phone: '13800138000',
        variables: { 客户姓名: '张先生', 公司名称: '星河宽带', 产品名称: '千兆宽带' },
        // The simulated carrier's ordinary callee may not pick up (a realistic mix); this one does.
        simulatedPersona: 'interested',
      }),
    });
    const answer = (await placed.json()) as { data: { callId: string } };
    expect(placed.status, JSON.stringify(answer)).toBe(200);
    expect(placed.headers.get('ratelimit-policy')).toMatch(/;w=60/);
    const { data } = answer;
    const callId = data.callId;

    // The call's events arrive at the receiver, each signed with the endpoint's secret.
    await expect
      .poll(() => eventsOf(callId).map((e) => e.payload.type), { timeout: 60_000 })
      .toEqual(expect.arrayContaining(['call.started', 'call.answered', 'call.ended']));
    const verifier = new Webhook(signingSecret);
    for (const event of eventsOf(callId)) {
      expect(() =>
        verifier.verify(event.body, {
          'webhook-id': String(event.headers['webhook-id']),
          'webhook-timestamp': String(event.headers['webhook-timestamp']),
          'webhook-signature': String(event.headers['webhook-signature']),
        }),
      ).not.toThrow();
    }
    const ended = eventsOf(callId).find((e) => e.payload.type === 'call.ended')!;
    const endedId = String(ended.headers['webhook-id']);

    // The same events in the endpoint's delivery log; the call.ended one replayed from there.
    await p.goto(endpointUrl);
    const row = p.locator('.ant-table-tbody tr').filter({ hasText: endedId });
    await expectVisible(row, 'the call.ended delivery in the log', 20_000);
    expect(await textOf(row)).toContain('成功');
    await row.click();
    const drawer = p.locator('.ant-drawer').filter({ hasText: '投递详情' });
    await expectVisible(drawer, 'the delivery drawer');
    await expect.poll(() => textOf(drawer), { timeout: 10_000 }).toContain(callId);
    const before = received.length;
    await drawer.getByRole('button', { name: '重新发送' }).click();
    await expectVisible(p.getByText(/重新发送成功/), 'the replay result');
    await expect.poll(() => received.length, { timeout: 15_000 }).toBeGreaterThan(before);
    const replay = received.slice(before).find((r) => r.headers['webhook-id'] === endedId)!;
    expect(replay.body).toBe(ended.body);
    expect(Number(replay.headers['webhook-timestamp'])).toBeGreaterThanOrEqual(
      Number(ended.headers['webhook-timestamp']),
    );
    expect(() =>
      verifier.verify(replay.body, {
        'webhook-id': endedId,
        'webhook-timestamp': String(replay.headers['webhook-timestamp']),
        'webhook-signature': String(replay.headers['webhook-signature']),
      }),
    ).not.toThrow();
    await expect.poll(async () => (await textOf(drawer)).match(/第 2 次尝试|手动重发/) !== null).toBe(true);
  });
});
