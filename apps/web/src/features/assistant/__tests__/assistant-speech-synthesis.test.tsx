import type { SynthesisProvider, VoiceOption } from '@callpilot/contracts';
import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { startFakeFetch } from '@/test/fake-fetch';
import { ok } from '@/test/fake-server';
import { detail, renderAssistant, serveAssistant, signIn } from './assistant-fixtures';

let server: ReturnType<typeof serveAssistant> | undefined;

beforeEach(() => {
  signIn();
});
afterEach(() => {
  server?.stop();
  server = undefined;
});

const PROFILES = '/api/project/p1/synthesis-providers';

const cosy: SynthesisProvider = {
  id: 'tp1',
  name: '百炼 CosyVoice',
  vendor: 'cosyvoice',
  baseUrl: 'wss://dashscope.aliyuncs.com/api-ws/v1/inference',
  model: 'cosyvoice-v2',
  appId: '',
  keyId: '',
  hasApiKey: true,
  apiKeyHint: 'x9Zq',
  createdAt: '2026-03-01T02:00:00.000Z',
  updatedAt: '2026-03-01T02:00:00.000Z',
};
const profiles = (...items: SynthesisProvider[]) =>
  ok({ items, total: items.length, page: 1, pageSize: 100 });

const voices: VoiceOption[] = [
  { provider: 'espeak', voiceId: 'cmn', name: '普通话（标准）', language: 'zh-CN' },
  { provider: 'espeak', voiceId: 'cmn+f3', name: '普通话女声', language: 'zh-CN' },
  {
    provider: 'tp1',
    voiceId: 'longxiaochun_v2',
    name: '龙小淳（温柔姐姐）',
    language: 'zh-CN',
    gender: 'female',
    providerName: '百炼 CosyVoice',
    vendor: 'cosyvoice',
  },
  {
    provider: 'tp1',
    voiceId: 'longcheng_v2',
    name: '龙橙（阳光男声）',
    language: 'zh-CN',
    gender: 'male',
    providerName: '百炼 CosyVoice',
    vendor: 'cosyvoice',
  },
];

/** The 语音配置 page on one of its tabs. */
async function openTab(tab: '语音合成' | '声音复刻') {
  renderAssistant('/assistant/speech');
  fireEvent.click(await screen.findByRole('tab', { name: tab }));
  await waitFor(() =>
    expect(screen.getByRole('tab', { name: tab }).getAttribute('aria-selected')).toBe('true'),
  );
  return screen.getByRole('tabpanel');
}

describe('语音配置 page', () => {
  it('has the 语音识别, 语音合成 and 声音复刻 tabs', async () => {
    server = serveAssistant();
    renderAssistant('/assistant/speech');
    expect(await screen.findByRole('heading', { name: '语音配置' })).toBeTruthy();
    expect(screen.getAllByRole('tab').map((tab) => tab.textContent)).toEqual([
      '语音识别',
      '语音合成',
      '声音复刻',
    ]);
    expect(await screen.findByRole('button', { name: '添加语音识别配置' })).toBeTruthy();

    fireEvent.click(screen.getByRole('tab', { name: '声音复刻' }));
    // Without balance limits the project may clone: the (empty) list and its create button.
    const clones = screen.getByRole('tabpanel');
    expect(await within(clones).findByText('还没有复刻音色')).toBeTruthy();
    expect(within(clones).getByRole('button', { name: /新建复刻/ })).toBeTruthy();
  });
});

describe('语音配置 › 语音合成', () => {
  it('adds a CosyVoice profile in a drawer: the vendor’s own fields and rules, defaults filled in', async () => {
    let stored: SynthesisProvider[] = [];
    server = serveAssistant({}, (request) => {
      if (request.url !== PROFILES) return undefined;
      if (request.method === 'POST') {
        const sent = request.body as Record<string, string>;
        stored = [{ ...cosy, name: sent.name as string }];
        return ok(stored[0]);
      }
      return profiles(...stored);
    });
    const tab = await openTab('语音合成');
    expect(await within(tab).findByText('暂无语音合成配置，小助手使用离线音色')).toBeTruthy();
    fireEvent.click(within(tab).getByRole('button', { name: '添加语音合成配置' }));
    const drawer = await screen.findByRole('dialog');

    expect((within(drawer).getByLabelText('合成模型') as HTMLInputElement).value).toBe('cosyvoice-v2');
    fireEvent.change(within(drawer).getByLabelText('合成模型'), { target: { value: 'qwen-tts' } });
    fireEvent.click(within(drawer).getByRole('button', { name: '保存' }));
    // The contract's own rules, before asking the server.
    expect(await within(drawer).findByText('请输入配置名称')).toBeTruthy();
    expect(within(drawer).getByText('模型须为 cosyvoice 开头，如 cosyvoice-v2')).toBeTruthy();
    expect(within(drawer).getByText('请输入API Key')).toBeTruthy();
    expect(server.requests.some((request) => request.method === 'POST')).toBe(false);

    fireEvent.change(within(drawer).getByLabelText('配置名称'), { target: { value: '百炼 CosyVoice' } });
    fireEvent.change(within(drawer).getByLabelText('合成模型'), { target: { value: 'cosyvoice-v2' } });
    fireEvent.change(within(drawer).getByLabelText('API Key'), {
      target: { value: 'sk-dashscope-0001x9Zq' },
    });
    fireEvent.click(within(drawer).getByRole('button', { name: '保存' }));

    expect(await within(tab).findByText('百炼 CosyVoice')).toBeTruthy();
    expect(within(tab).getByText('API Key：已保存（…x9Zq）')).toBeTruthy();
    expect(server.requests.find((request) => request.method === 'POST')?.body).toEqual({
      name: '百炼 CosyVoice',
      vendor: 'cosyvoice',
      model: 'cosyvoice-v2',
      baseUrl: 'wss://dashscope.aliyuncs.com/api-ws/v1/inference',
      apiKey: 'sk-dashscope-0001x9Zq',
    });
  });

  it('测试合成 plays the sentence it spoke and shows 首包延迟 and 总耗时; a failure says why', async () => {
    let attempt = 0;
    server = serveAssistant({ [`GET ${PROFILES}`]: profiles(cosy) }, (request) => {
      if (request.url !== `${PROFILES}/tp1/test`) return undefined;
      attempt++;
      return attempt === 1
        ? ok({
            ok: true,
            latencyMs: 910,
            firstAudioMs: 320,
            audioBase64: 'UklGRiQAAABXQVZF',
            message: '合成成功（音色 longxiaochun_v2）：首包 320 ms，共 3.2 秒音频',
          })
        : ok({
            ok: false,
            latencyMs: 40,
            firstAudioMs: null,
            audioBase64: '',
            message: '语音合成服务拒绝了 API Key（HTTP 401），请检查语音配置中的 API Key',
          });
    });
    const tab = await openTab('语音合成');
    fireEvent.click(await within(tab).findByRole('button', { name: '测试合成' }));

    expect(
      await within(tab).findByText('合成成功（音色 longxiaochun_v2）：首包 320 ms，共 3.2 秒音频'),
    ).toBeTruthy();
    expect(within(tab).getByText('首包延迟 320 ms · 总耗时 910 ms')).toBeTruthy();
    const audio = within(tab).getByLabelText('测试音频') as HTMLAudioElement;
    expect(audio.getAttribute('src')).toBe('data:audio/wav;base64,UklGRiQAAABXQVZF');
    expect(audio.autoplay).toBe(true);

    fireEvent.click(within(tab).getByRole('button', { name: '测试合成' }));
    expect(
      await within(tab).findByText(
        '合成失败：语音合成服务拒绝了 API Key（HTTP 401），请检查语音配置中的 API Key',
      ),
    ).toBeTruthy();
    expect(within(tab).queryByLabelText('测试音频')).toBeNull();
  });

  it('picks the fallback voice from every provider’s voices and saves it with the synthesis timeout', async () => {
    server = serveAssistant(
      { [`GET ${PROFILES}`]: profiles(cosy), 'GET /api/project/p1/voices': ok(voices) },
      (request) =>
        request.method === 'PUT' && request.url === '/api/project/p1/speech-settings'
          ? ok(request.body)
          : undefined,
    );
    const tab = await openTab('语音合成');
    fireEvent.mouseDown(await within(tab).findByRole('combobox', { name: '备用音色' }));
    // Grouped by who speaks: the offline voices, then the profile by its name.
    expect(await screen.findByText('离线音色')).toBeTruthy();
    expect(screen.getAllByText('百炼 CosyVoice').length).toBeGreaterThan(0);
    fireEvent.click(await screen.findByTitle('龙橙（阳光男声）'));
    fireEvent.change(within(tab).getByLabelText('合成超时（毫秒）'), { target: { value: '900' } });
    fireEvent.click(within(tab).getByRole('button', { name: '保存' }));

    await waitFor(() =>
      expect(server?.requests.find((request) => request.method === 'PUT')?.body).toEqual({
        recognitionPrimaryId: null,
        recognitionFallbackId: null,
        synthesisFallback: { provider: 'tp1', voiceId: 'longcheng_v2' },
        recognitionTimeoutMs: 2000,
        synthesisTimeoutMs: 900,
      }),
    );
  });

  it('lets a member test, but not add, edit, delete or save', async () => {
    signIn({ member: true });
    server = serveAssistant({ [`GET ${PROFILES}`]: profiles(cosy) });
    const tab = await openTab('语音合成');
    expect(await within(tab).findByRole('button', { name: '测试合成' })).toBeTruthy();
    expect(
      within(tab).getByText('仅项目所有者或管理员可以添加、编辑或删除语音合成配置；你可以查看并测试。'),
    ).toBeTruthy();
    for (const name of ['添加语音合成配置', '编辑', '删除', '保存']) {
      expect(within(tab).queryByRole('button', { name })).toBeNull();
    }
  });
});

describe('the assistant editor’s voice picker', () => {
  it('lists every configured voice by provider, previews the chosen one and saves its provider with it', async () => {
    const saved: unknown[] = [];
    server = serveAssistant(
      { 'GET /api/project/p1/assistants/a1': ok(detail()), 'GET /api/project/p1/voices': ok(voices) },
      (request) => {
        if (request.method !== 'PUT') return undefined;
        saved.push(request.body);
        return ok(detail());
      },
    );
    Object.assign(URL, { createObjectURL: vi.fn(() => 'blob:preview-1'), revokeObjectURL: vi.fn() });
    const play = vi.spyOn(HTMLMediaElement.prototype, 'play').mockResolvedValue(undefined);
    const fetches = startFakeFetch((request) =>
      request.url === '/api/project/p1/tts/preview'
        ? { status: 200, bytes: new Uint8Array([82, 73, 70, 70]), contentType: 'audio/wav' }
        : { status: 200, chunks: [] },
    );
    renderAssistant('/assistant/edit?id=a1');

    fireEvent.mouseDown(await screen.findByRole('combobox', { name: '音色' }));
    expect(await screen.findByTitle('普通话女声（zh-CN）')).toBeTruthy();
    fireEvent.click(await screen.findByTitle('龙小淳（温柔姐姐）'));

    fireEvent.click(screen.getByRole('button', { name: '试听' }));
    await waitFor(() => expect(play).toHaveBeenCalled());
    expect(fetches.requests.find((request) => request.url.endsWith('/tts/preview'))?.body).toEqual({
      text: '您好张先生，我是示例教育的小李。',
      voice: { provider: 'tp1', voiceId: 'longxiaochun_v2', speed: 1, volume: 80 },
    });

    fireEvent.click(screen.getByRole('button', { name: '保存' }));
    await waitFor(() => expect(saved).toHaveLength(1));
    expect(saved[0]).toMatchObject({ config: { voice: { provider: 'tp1', voiceId: 'longxiaochun_v2' } } });
  });
});
