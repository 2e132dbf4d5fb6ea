import type { CallDetail } from '@callpilot/contracts';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import {
  levelOf,
  type OpenAISpeechServer,
  startOpenAISpeechServer,
} from '../../apps/server/src/engine/speech/testing/openai-speech-server';
import { readWav } from '../../apps/server/src/engine/speech/wav';
import { normalizeForSpeech } from '../../apps/server/src/engine/speech/zh-normalize';
import { launchBrowser } from '../support/browser';
import { chooseOption, expectVisible, openLoggedIn, textOf } from '../support/console';
import { openProjectApi, type ProjectApi } from '../support/project-api';

// Issue 14's "Done when": a provider configured on 语音配置, a voice previewed in the editor and
// heard in a test call. The provider is the server's own fake of the OpenAI-compatible
// `/v1/audio/speech` (the protocol self-hosted CosyVoice servers speak), started in this process:
// it checks the key and the model as a strict vendor does and renders each character as 40 ms of
// a known level, so what the browser plays can be traced back to it.

const baseUrl = inject('baseUrl');
let browser: Browser;
let context: BrowserContext | undefined;
let api: ProjectApi;
let tts: OpenAISpeechServer;

const API_KEY = 'sk-e2e-speech-5b1f0c7e9d3aK9zQ';
const MODEL = 'CosyVoice2-0.5B';
const MS_PER_CHAR = 40;
const PROFILE_NAME = `自部署 CosyVoice ${Date.now() % 100_000}`;
const NOVA = 'Nova（明亮女声）';
// The 客户回访 template's opening line with its variables' sample values: what 试听 speaks and
// what the assistant says first on the call.
const OPENING_LINE =
  '您好，请问是王先生吗？我是星河宽带的客服小安，想占用您一分钟，回访一下您最近使用千兆宽带套餐的情况，请问现在方便吗？';

beforeAll(async () => {
  tts = await startOpenAISpeechServer({ apiKey: API_KEY, models: [MODEL], msPerChar: MS_PER_CHAR });
  browser = await launchBrowser();
  api = await openProjectApi(baseUrl, inject('demoEmail'), inject('demoPassword'));
});
afterAll(async () => {
  await browser?.close();
  await tts?.close();
});
afterEach(async () => {
  await context?.close();
  context = undefined;
});

async function open(email = inject('demoEmail'), password = inject('demoPassword')): Promise<Page> {
  const opened = await openLoggedIn(browser, baseUrl, email, password);
  context = opened.context;
  return opened.page;
}

/**
 * An assistant of its own from the 客户回访 template, as assistant.test.ts makes one: the demo
 * assistant also answers the real-line tests, whose calls must not depend on this file's fake
 * server once it is closed.
 */
async function createAssistant(name: string): Promise<string> {
  const created = await api.call<{ id: string }>('POST', '/assistants', {
    name,
    use: 'outbound',
    templateKey: 'customer-follow-up',
  });
  return created.id;
}

/** What the fake was asked to speak, from the `from`-th request on, with how it answered. */
const spoken = (from = 0) =>
  tts.requests.slice(from).map((r) => ({
    input: String(r.body.input),
    voice: String(r.body.voice),
    status: r.status,
    complete: r.framesSent > 0 && !r.closedEarly,
  }));

/** 16-bit mono samples of a WAV file. */
function samplesOf(wav: Buffer) {
  const info = readWav(wav);
  const samples = new Int16Array(info.dataBytes / 2);
  for (let i = 0; i < samples.length; i++) samples[i] = wav.readInt16LE(info.dataOffset + i * 2);
  return { info, samples };
}

/** The <audio> element's state as the page has it. */
const mediaState = (p: Page, selector: string) =>
  p.locator(selector).evaluate((element: HTMLAudioElement) => ({
    src: element.currentSrc || element.src,
    readyState: element.readyState,
    duration: element.duration,
    currentTime: element.currentTime,
    ended: element.ended,
    error: element.error?.code ?? null,
  }));

/** The detail page says 录音生成中 with a 刷新 link while the recording mixes. */
async function waitForPlayer(p: Page, timeoutMs: number) {
  const recording = p.getByRole('region', { name: '录音' });
  const play = recording.getByRole('button', { name: '播放', exact: true });
  const refresh = recording.getByRole('button', { name: '刷新', exact: true });
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if ((await play.isVisible()) && (await play.isEnabled())) return;
    if (await refresh.isVisible()) await refresh.click().catch(() => undefined);
    await p.waitForTimeout(1000);
  }
  throw new Error(`the recording did not become playable in ${timeoutMs} ms: ${await textOf(recording)}`);
}

describe('speech providers', () => {
  it('configures a synthesis provider on 语音配置, previews its voice and speaks a test call with it', async () => {
    const assistantName = `音色测试-${Date.now()}`;
    const assistantId = await createAssistant(assistantName);
    const p = await open();

    // 1. 智能小助手 → 语音配置 → 语音合成 → 添加语音合成配置.
    await p.getByRole('link', { name: '智能小助手', exact: true }).click();
    await p.waitForURL((url) => url.pathname === '/assistant/list');
    await p.getByRole('button', { name: '语音配置', exact: true }).click();
    await p.waitForURL((url) => url.pathname === '/assistant/speech');
    await expectVisible(p.getByRole('heading', { name: '语音配置' }), 'the 语音配置 page');
    await p.getByRole('tab', { name: '语音合成', exact: true }).click();
    await p.waitForURL((url) => url.searchParams.get('tab') === 'synthesis');
    await p.getByRole('button', { name: '添加语音合成配置', exact: true }).click();
    const drawer = p.getByRole('dialog', { name: '语音合成配置' });
    await expectVisible(drawer, 'the profile drawer');
    await chooseOption(p, drawer.getByLabel('服务类型', { exact: true }), 'OpenAI 兼容接口（/audio/speech）');
    await drawer.getByLabel('配置名称', { exact: true }).fill(PROFILE_NAME);
    await drawer.getByLabel('接口地址', { exact: true }).fill(tts.baseUrl);
    await drawer.getByLabel('合成模型', { exact: true }).fill(MODEL);
    await drawer.getByLabel('API Key', { exact: true }).fill(API_KEY);
    const created = p.waitForResponse(
      (res) => res.url().endsWith('/synthesis-providers') && res.request().method() === 'POST',
    );
    await drawer.getByRole('button', { name: '保存', exact: true }).click();
    const createdRes = await created;
    const createdBody = await createdRes.text();
    expect(createdRes.status(), createdBody).toBe(200);
    expect(createdBody).not.toContain(API_KEY);
    const profileId = (JSON.parse(createdBody) as { data: { id: string } }).data.id;
    await expect.poll(() => drawer.isVisible()).toBe(false);

    // The key is never shown again: the list has only its last 4 characters, the edit form none.
    const row = p.getByRole('listitem').filter({ has: p.getByText(PROFILE_NAME, { exact: true }) });
    await expectVisible(row, 'the new profile');
    const rowText = await textOf(row);
    expect(rowText).toContain(`OpenAI 兼容接口（/audio/speech） · ${tts.baseUrl} · ${MODEL}`);
    expect(rowText).toContain(`API Key：已保存（…${API_KEY.slice(-4)}）`);
    await row.getByRole('button', { name: '编辑', exact: true }).click();
    await expectVisible(drawer, 'the edit drawer');
    expect(await drawer.getByLabel('API Key', { exact: true }).inputValue()).toBe('');
    expect(await textOf(drawer)).toContain(`已保存（…${API_KEY.slice(-4)}），留空则保持不变`);
    await drawer.getByRole('button', { name: '取消', exact: true }).click();
    await expect.poll(() => drawer.isVisible()).toBe(false);
    expect(await p.content()).not.toContain(API_KEY);

    // 2. 测试合成: the sentence comes back from the fake, with the two times a caller feels.
    const beforeTest = tts.requests.length;
    await row.getByRole('button', { name: '测试合成', exact: true }).click();
    const timing = row.getByText(/^首包延迟 \d+ ms · 总耗时 \d+ ms$/);
    await expectVisible(timing, 'the test result', 20_000);
    const [firstAudioMs, totalMs] = ((await textOf(timing)).match(/\d+/g) ?? []).map(Number);
    expect(firstAudioMs).toBeLessThanOrEqual(totalMs ?? -1);
    expect(await textOf(row)).toMatch(/合成成功（音色 alloy）：首包 \d+ ms，共 \d+\.\d 秒音频/);
    const testRequests = spoken(beforeTest);
    expect(testRequests.length).toBe(1);
    const testRequest = testRequests[0]!;
    expect(testRequest).toMatchObject({ voice: 'alloy', status: 200, complete: true });
    expect(tts.requests[beforeTest]?.headers.authorization).toBe(`Bearer ${API_KEY}`);
    expect(tts.requests[beforeTest]?.body.model).toBe(MODEL);

    // The audio on the page is the fake's: 16 kHz, 40 ms a character, each at its own level.
    const testAudio = row.getByLabel('测试音频', { exact: true });
    await expectVisible(testAudio, 'the test audio');
    const src = (await testAudio.getAttribute('src')) ?? '';
    expect(src.startsWith('data:audio/wav;base64,')).toBe(true);
    const { info, samples } = samplesOf(Buffer.from(src.slice(src.indexOf(',') + 1), 'base64'));
    const chars = [...testRequest.input];
    expect(info.sampleRate).toBe(16_000);
    expect(info.durationMs).toBe(chars.length * MS_PER_CHAR);
    const perChar = (16_000 * MS_PER_CHAR) / 1000;
    const levels = chars.map((_, i) => samples[i * perChar + perChar / 2]);
    expect(levels).toEqual(chars.map((_, i) => levelOf(i)));
    // And the browser can play it: it loads, as long as it is.
    await expect
      .poll(async () => (await mediaState(p, 'audio[aria-label="测试音频"]')).readyState, { timeout: 10_000 })
      .toBeGreaterThanOrEqual(1);
    const loaded = await mediaState(p, 'audio[aria-label="测试音频"]');
    expect(loaded.error).toBeNull();
    expect(Math.abs(loaded.duration - info.durationMs / 1000)).toBeLessThan(0.05);

    // 3. The assistant's editor: the profile's voices are in the picker under its name.
    await p.goto(`/assistant/edit?id=${assistantId}`);
    await expectVisible(p.getByRole('heading', { name: '编辑小助手' }), 'the editor');
    expect(await p.getByLabel('名称', { exact: true }).inputValue()).toBe(assistantName);
    const voiceSelect = p.getByLabel('音色', { exact: true });
    await voiceSelect.click();
    await p.keyboard.type('Nova');
    const group = p
      .locator('.ant-select-dropdown .ant-select-item-group')
      .filter({ visible: true })
      .and(p.locator(`[title="${PROFILE_NAME}"]`));
    await expectVisible(group, `the ${PROFILE_NAME} group in the voice picker`);
    const nova = group.locator('xpath=following-sibling::div[1]');
    expect(await nova.getAttribute('title')).toBe(NOVA);
    await nova.click();
    await expect.poll(() => textOf(p.locator('.ant-select').filter({ has: voiceSelect }))).toBe(NOVA);

    // 试听 speaks the opening line in that voice, through the provider.
    const beforePreview = tts.requests.length;
    const previewRequest = p.waitForRequest((req) => req.url().endsWith('/tts/preview'));
    const previewResponse = p.waitForResponse((res) => res.url().endsWith('/tts/preview'));
    await p.getByRole('button', { name: '试听', exact: true }).click();
    const sent = (await previewRequest).postDataJSON() as {
      text: string;
      voice: { provider: string; voiceId: string };
    };
    const preview = await previewResponse;
    expect(preview.status(), await preview.text()).toBe(200);
    expect(preview.headers()['content-type']).toBe('audio/wav');
    expect(sent.text).toBe(OPENING_LINE);
    expect(sent.voice).toMatchObject({ provider: profileId, voiceId: 'nova' });
    const previewed = spoken(beforePreview);
    expect(previewed).toEqual([
      { input: normalizeForSpeech(OPENING_LINE), voice: 'nova', status: 200, complete: true },
    ]);
    const previewMs = [...normalizeForSpeech(OPENING_LINE)].length * MS_PER_CHAR;
    expect(Number(preview.headers()['x-audio-duration-ms'])).toBe(previewMs);
    // The editor's player has it and plays it (or has played it to the end).
    const player = 'section:has(> div > h2:text-is("音色")) audio';
    await expect
      .poll(async () => (await mediaState(p, player)).readyState, { timeout: 10_000 })
      .toBeGreaterThanOrEqual(1);
    const heard = await mediaState(p, player);
    expect(heard.src.startsWith('blob:')).toBe(true);
    expect(heard.error).toBeNull();
    expect(Math.abs(heard.duration - previewMs / 1000)).toBeLessThan(0.05);
    await expect
      .poll(
        async () => {
          const state = await mediaState(p, player);
          return state.currentTime > 0 || state.ended;
        },
        { timeout: 10_000 },
      )
      .toBe(true);

    // Saved and published: calls run the published version.
    await p.getByRole('button', { name: '保存', exact: true }).click();
    await expectVisible(p.getByText('已保存', { exact: true }), 'the saved toast');
    const note = '改用自部署 CosyVoice 音色';
    await p.getByRole('button', { name: '发布', exact: true }).click();
    const publishDialog = p.getByRole('dialog', { name: '发布新版本' });
    await expectVisible(publishDialog, 'the publish dialog');
    await publishDialog.getByLabel('版本说明').fill(note);
    await publishDialog.getByRole('button', { name: '发布', exact: true }).click();
    await expectVisible(p.getByText('已发布 v1', { exact: true }), 'the 已发布 v1 tag');
    const published = await api.get<{ config: { voice: { provider: string; voiceId: string } } }>(
      `/assistants/${assistantId}`,
    );
    expect(published.config.voice).toMatchObject({ provider: profileId, voiceId: 'nova' });

    // 4. 模拟通话 on v1; its recording is mixed in the assistant's own voice.
    const number = `139${String(Math.floor(Math.random() * 1e8)).padStart(8, '0')}`;
    const startDialog = p.getByRole('button', { name: '模拟通话', exact: true });
    await startDialog.click();
    const dialog = p.getByRole('dialog', { name: '模拟通话' });
    await expectVisible(dialog, 'the 模拟通话 dialog');
    await chooseOption(p, dialog.getByLabel('模拟客户', { exact: true }), '有意向的客户');
    await dialog.getByLabel('被叫号码', { exact: true }).fill(number);
    await chooseOption(p, dialog.getByLabel('版本', { exact: true }), `v1 · ${note}`);
    const beforeCall = tts.requests.length;
    await dialog.getByRole('button', { name: '开始模拟', exact: true }).click();
    const status = dialog.getByLabel('通话状态', { exact: true });
    await expect.poll(() => textOf(status), { timeout: 45_000 }).toMatch(/^已结束：/);
    await dialog.getByRole('link', { name: '查看通话记录', exact: true }).click();
    await p.waitForURL((url) => url.pathname.startsWith('/call-record/detail/'));
    const callId = decodeURIComponent(new URL(p.url()).pathname.split('/').pop() ?? '');
    const facts = p.getByRole('region', { name: '通话信息' });
    await expectVisible(facts, 'the call facts');
    expect(await textOf(facts)).toContain(`被叫${number}`);
    await waitForPlayer(p, 60_000);

    const call = await api.get<CallDetail>(`/calls/${encodeURIComponent(callId)}`);
    expect(call.recording).toBe('ready');
    expect(call.assistantName).toBe(assistantName);
    expect(call.turns[0]).toMatchObject({ speaker: 'assistant', text: OPENING_LINE });
    // Every line of the assistant went to the provider in its voice and came back whole; the
    // callee's lines did not (they are spoken offline). Turns are well under the 500 characters a
    // recording speaks of each.
    const heardOnCall = spoken(beforeCall);
    const says = (speaker: 'assistant' | 'callee') =>
      call.turns
        .filter((t) => t.speaker === speaker && t.text.trim())
        .map((t) => normalizeForSpeech(t.text.trim()));
    expect(says('assistant').length).toBeGreaterThanOrEqual(2);
    for (const line of says('assistant')) {
      expect(heardOnCall, `the assistant's line "${line}"`).toContainEqual({
        input: line,
        voice: 'nova',
        status: 200,
        complete: true,
      });
    }
    for (const line of says('callee')) {
      expect(heardOnCall.map((r) => r.input)).not.toContain(line);
    }
  }, 120_000);

  it('offers 声音复刻 only where the 声音克隆 quota allows it, and the server agrees', async () => {
    // The demo project has no balance limits: cloning is open.
    let p = await open();
    await p.goto('/assistant/speech?tab=clone');
    const clonePanel = p.getByRole('tabpanel', { name: '声音复刻' });
    await expectVisible(clonePanel.getByRole('button', { name: '新建复刻', exact: true }), 'the clone UI');
    expect(await textOf(clonePanel)).toContain('用 10～20 秒的朗读录音复刻一个声音');
    expect(await clonePanel.getByText('当前项目未开通声音克隆功能').count()).toBe(0);
    await context?.close();

    // A project with limits and a 声音克隆 quota of 0: the reason, in Chinese, and no way to clone.
    p = await open(inject('limitedEmail'), inject('limitedPassword'));
    await p.goto('/assistant/speech?tab=clone');
    const limitedPanel = p.getByRole('tabpanel', { name: '声音复刻' });
    await expectVisible(limitedPanel.getByText('当前项目未开通声音克隆功能', { exact: true }), 'the reason');
    expect(await textOf(limitedPanel)).toContain('声音复刻需要开通声音克隆额度，请联系销售开通后再使用。');
    expect(await limitedPanel.getByRole('button', { name: '新建复刻' }).count()).toBe(0);

    // The server refuses the enrolment itself, whatever the console shows.
    const limited = await openProjectApi(baseUrl, inject('limitedEmail'), inject('limitedPassword'));
    const form = new FormData();
    form.set('name', '我的声音');
    form.set('providerId', 'none');
    const res = await fetch(`${baseUrl}/api/project/${limited.projectId}/voice-clones`, {
      method: 'POST',
      headers: limited.headers,
      body: form,
    });
    const body = (await res.json()) as { message?: string };
    expect(res.status).toBe(403);
    expect(body.message).toBe('声音克隆功能未开通，请联系销售开通');
  });
});
