import type { SpeechProvider } from '@callpilot/contracts';
import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import { toast } from 'sonner';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { startFakeFetch } from '@/test/fake-fetch';
import { failure, ok } from '@/test/fake-server';
import { detail, renderAssistant, serveAssistant, signIn } from './assistant-fixtures';

let server: ReturnType<typeof serveAssistant> | undefined;

beforeEach(() => {
  signIn();
  vi.spyOn(toast, 'error');
  // The test chat opens with the opening line; these tests are about hearing, so it stays quiet.
  startFakeFetch(() => ({ status: 200, chunks: [] }));
});
afterEach(() => {
  server?.stop();
  server = undefined;
});

const WARNING =
  '未选择语音识别：真实线路通话使用语音配置中的主识别；若语音配置也未设置，只能识别按键，无法听懂客户说话（模拟通话不受影响）';
const URL = '/api/project/p1/speech-providers';

const whisper: SpeechProvider = {
  id: 'sp1',
  name: 'Whisper',
  vendor: 'openai_compatible',
  baseUrl: 'https://api.openai.com/v1',
  model: 'whisper-1',
  appId: '',
  keyId: '',
  hasApiKey: true,
  apiKeyHint: 'k7Qw',
  createdAt: '2026-03-01T02:00:00.000Z',
  updatedAt: '2026-03-01T02:00:00.000Z',
};
const profiles = (...items: SpeechProvider[]) => ok({ items, total: items.length, page: 1, pageSize: 100 });

const assistant = detail();
const listening = detail({ config: { ...assistant.config, hearing: { providerId: 'sp1', hotwords: [] } } });

describe('assistant editor: 语音识别', () => {
  it('warns that a real line only understands key presses while no profile is chosen, and saves the choice', async () => {
    const saved: unknown[] = [];
    server = serveAssistant(
      { 'GET /api/project/p1/assistants/a1': ok(assistant), [`GET ${URL}`]: profiles(whisper) },
      (request) => {
        if (request.method !== 'PUT') return undefined;
        saved.push(request.body);
        return ok(saved.length === 1 ? listening : assistant);
      },
    );
    renderAssistant('/assistant/edit?id=a1');
    const choose = async (title: string) => {
      fireEvent.mouseDown(screen.getByLabelText('语音识别配置'));
      fireEvent.click(await screen.findByTitle(title));
    };

    expect(await screen.findByText(WARNING)).toBeTruthy();
    await choose('Whisper');
    await waitFor(() => expect(screen.queryByText(WARNING)).toBeNull());
    // Hotwords: typed and entered one by one, sent with the recogniser.
    const hotwords = screen.getByLabelText('热词');
    for (const word of ['星河宽带', '千兆套餐']) {
      fireEvent.change(hotwords, { target: { value: word } });
      fireEvent.keyDown(hotwords, { key: 'Enter', code: 'Enter', keyCode: 13 });
    }
    fireEvent.click(screen.getByRole('button', { name: '保存' }));
    await waitFor(() => expect(saved).toHaveLength(1));
    expect(saved[0]).toMatchObject({
      config: { hearing: { providerId: 'sp1', hotwords: ['星河宽带', '千兆套餐'] } },
    });

    await choose('跟随语音配置（主识别）');
    expect(await screen.findByText(WARNING)).toBeTruthy();
    fireEvent.click(screen.getByRole('button', { name: '保存' }));
    await waitFor(() => expect(saved).toHaveLength(2));
    expect(saved[1]).toMatchObject({ config: { hearing: { providerId: null } } });
  });
});

/** The 语音配置 page, opened from the assistant list's 语音配置 button, on its 语音识别 tab. */
async function openSpeechPage() {
  renderAssistant('/assistant/list');
  fireEvent.click(await screen.findByRole('button', { name: '语音配置' }));
  expect(await screen.findByRole('heading', { name: '语音配置' })).toBeTruthy();
  return screen.getByRole('tabpanel');
}

describe('语音识别配置 drawer (assistant editor)', () => {
  it('adds a profile from the editor, and the new profile can be chosen at once', async () => {
    let stored: SpeechProvider[] = [];
    server = serveAssistant({ 'GET /api/project/p1/assistants/a1': ok(assistant) }, (request) => {
      if (request.url !== URL) return undefined;
      if (request.method === 'POST') {
        stored = [{ ...whisper, id: 'sp2', name: '本地识别', hasApiKey: false, apiKeyHint: '' }];
        return ok(stored[0]);
      }
      return profiles(...stored);
    });
    renderAssistant('/assistant/edit?id=a1');

    fireEvent.click(await screen.findByRole('button', { name: '管理语音识别配置' }));
    const drawer = await screen.findByRole('dialog');
    expect(await within(drawer).findByText('暂无语音识别配置')).toBeTruthy();
    fireEvent.click(within(drawer).getByRole('button', { name: '添加语音识别配置' }));
    fireEvent.click(within(drawer).getByRole('button', { name: '保存' }));
    // The contract's own rules, before asking the server.
    expect(await within(drawer).findByText('请输入配置名称')).toBeTruthy();
    expect(within(drawer).getByText('请输入识别模型')).toBeTruthy();
    expect(within(drawer).getByText('接口地址须为 http(s) 网址')).toBeTruthy();

    fireEvent.change(within(drawer).getByLabelText('配置名称'), { target: { value: '本地识别' } });
    fireEvent.change(within(drawer).getByLabelText('接口地址'), {
      target: { value: 'http://10.0.0.5:8000/v1' },
    });
    fireEvent.change(within(drawer).getByLabelText('识别模型'), { target: { value: 'sensevoice' } });
    fireEvent.click(within(drawer).getByRole('button', { name: '保存' }));

    expect(await within(drawer).findByText('本地识别')).toBeTruthy();
    expect(within(drawer).getByText('API Key：未设置')).toBeTruthy();
    expect(server.requests.find((request) => request.method === 'POST')?.body).toEqual({
      name: '本地识别',
      vendor: 'openai_compatible',
      baseUrl: 'http://10.0.0.5:8000/v1',
      model: 'sensevoice',
    });
    fireEvent.mouseDown(screen.getByRole('combobox', { name: '语音识别配置' }));
    expect(await screen.findByTitle('本地识别')).toBeTruthy();
  });
});

describe('语音配置 › 语音识别', () => {
  it('tests a profile, shows what it heard and how long it took, and edits it in a drawer without resending the key', async () => {
    server = serveAssistant({
      'GET /api/project/p1/assistants': ok({ items: [], total: 0, page: 1, pageSize: 20 }),
      [`GET ${URL}`]: profiles(whisper),
      [`POST ${URL}/sp1/test`]: ok({
        ok: true,
        latencyMs: 640,
        text: '您好。',
        message: '识别成功，样例语音「您好」识别为：「您好。」',
      }),
      [`PUT ${URL}/sp1`]: ok({ ...whisper, model: 'whisper-large-v3' }),
    });
    const page = await openSpeechPage();
    expect(await within(page).findByText('API Key：已保存（…k7Qw）')).toBeTruthy();
    fireEvent.click(within(page).getByRole('button', { name: '测试识别' }));
    expect(
      await within(page).findByText('识别成功，样例语音「您好」识别为：「您好。」（耗时 640 ms）'),
    ).toBeTruthy();

    fireEvent.click(within(page).getByRole('button', { name: '编辑' }));
    const drawer = await screen.findByRole('dialog');
    expect(await within(drawer).findByText('已保存（…k7Qw），留空则保持不变')).toBeTruthy();
    fireEvent.change(within(drawer).getByLabelText('识别模型'), { target: { value: 'whisper-large-v3' } });
    fireEvent.click(within(drawer).getByRole('button', { name: '保存' }));
    await waitFor(() =>
      expect(server?.requests.find((request) => request.method === 'PUT')?.body).toEqual({
        name: 'Whisper',
        vendor: 'openai_compatible',
        baseUrl: 'https://api.openai.com/v1',
        model: 'whisper-large-v3',
      }),
    );
  });

  it('transcribes an uploaded recording and shows what it heard and how long it took', async () => {
    server = serveAssistant({
      'GET /api/project/p1/assistants': ok({ items: [], total: 0, page: 1, pageSize: 20 }),
      [`GET ${URL}`]: profiles(whisper),
      [`POST ${URL}/sp1/test`]: ok({
        ok: true,
        latencyMs: 1830,
        text: '我想咨询一下宽带套餐',
        message: '识别成功，上传的录音识别为：「我想咨询一下宽带套餐」',
      }),
    });
    const page = await openSpeechPage();
    await within(page).findByText('Whisper');
    const recording = new File([new Uint8Array([82, 73, 70, 70])], '客户录音.wav', { type: 'audio/wav' });
    const input = page.querySelector('input[type="file"]') as HTMLInputElement;
    expect(input.accept).toContain('.wav');
    fireEvent.change(input, { target: { files: [recording] } });

    expect(
      await within(page).findByText('识别成功，上传的录音识别为：「我想咨询一下宽带套餐」（耗时 1830 ms）'),
    ).toBeTruthy();
    const sent = server.requests.find((request) => request.method === 'POST')?.body;
    expect(sent).toBeInstanceOf(FormData);
    expect(((sent as FormData).get('file') as File).name).toBe('客户录音.wav');
  });

  it('shows a failed test beside the profile, and the server’s reason when a delete is refused', async () => {
    server = serveAssistant({
      'GET /api/project/p1/assistants': ok({ items: [], total: 0, page: 1, pageSize: 20 }),
      [`GET ${URL}`]: profiles(whisper),
      [`POST ${URL}/sp1/test`]: ok({
        ok: false,
        latencyMs: 35,
        text: '',
        message: '语音识别服务拒绝了 API Key（HTTP 401），请检查语音识别配置中的 API Key',
      }),
      [`DELETE ${URL}/sp1`]: failure(
        409,
        '该语音识别配置是本项目的主识别配置，请先在语音配置中改选其他主识别配置后再删除',
        'CONFLICT',
      ),
    });
    const page = await openSpeechPage();

    fireEvent.click(await within(page).findByRole('button', { name: '测试识别' }));
    expect(
      await within(page).findByText(
        '识别失败：语音识别服务拒绝了 API Key（HTTP 401），请检查语音识别配置中的 API Key',
      ),
    ).toBeTruthy();

    fireEvent.click(within(page).getByRole('button', { name: '删除' }));
    const confirm = await screen.findByRole('tooltip');
    fireEvent.click(within(confirm).getByRole('button', { name: '删除' }));
    await waitFor(() =>
      expect(toast.error).toHaveBeenCalledWith(
        '该语音识别配置是本项目的主识别配置，请先在语音配置中改选其他主识别配置后再删除',
        expect.anything(),
      ),
    );
    expect(within(page).getByText('Whisper')).toBeTruthy();
  });

  it('lets a member read and test the profiles and the 主备 settings, without the buttons to change them', async () => {
    signIn({ member: true });
    server = serveAssistant({
      'GET /api/project/p1/assistants': ok({ items: [], total: 0, page: 1, pageSize: 20 }),
      [`GET ${URL}`]: profiles(whisper),
    });
    const page = await openSpeechPage();

    expect(await within(page).findByText('API Key：已保存（…k7Qw）')).toBeTruthy();
    expect(
      within(page).getByText('仅项目所有者或管理员可以添加、编辑或删除语音识别配置；你可以查看并测试。'),
    ).toBeTruthy();
    expect(within(page).getByRole('button', { name: '测试识别' })).toBeTruthy();
    expect(within(page).getByRole('button', { name: '上传录音识别' })).toBeTruthy();
    for (const name of ['添加语音识别配置', '编辑', '删除', '保存']) {
      expect(within(page).queryByRole('button', { name })).toBeNull();
    }
    expect((await within(page).findByRole('combobox', { name: '主识别配置' })).hasAttribute('disabled')).toBe(
      true,
    );
  });

  it('sets the primary and fallback recogniser and the timeout, refusing the same profile twice', async () => {
    const second: SpeechProvider = { ...whisper, id: 'sp2', name: '阿里云识别' };
    server = serveAssistant(
      {
        'GET /api/project/p1/assistants': ok({ items: [], total: 0, page: 1, pageSize: 20 }),
        [`GET ${URL}`]: profiles(whisper, second),
      },
      (request) =>
        request.method === 'PUT' && request.url === '/api/project/p1/speech-settings'
          ? ok(request.body)
          : undefined,
    );
    const page = await openSpeechPage();
    const choose = async (label: string, title: string) => {
      fireEvent.mouseDown(await within(page).findByRole('combobox', { name: label }));
      const options = await screen.findAllByTitle(title);
      fireEvent.click(options.at(-1) as HTMLElement);
    };

    await choose('主识别配置', 'Whisper');
    await choose('备用识别配置', 'Whisper');
    fireEvent.click(within(page).getByRole('button', { name: '保存' }));
    expect(await within(page).findByText('备用识别配置不能与主识别配置相同')).toBeTruthy();
    expect(server.requests.some((request) => request.method === 'PUT')).toBe(false);

    await choose('备用识别配置', '阿里云识别');
    fireEvent.change(within(page).getByLabelText('识别超时（毫秒）'), { target: { value: '1200' } });
    fireEvent.click(within(page).getByRole('button', { name: '保存' }));
    await waitFor(() =>
      expect(server?.requests.find((request) => request.method === 'PUT')?.body).toEqual({
        recognitionPrimaryId: 'sp1',
        recognitionFallbackId: 'sp2',
        synthesisFallback: { provider: 'espeak', voiceId: 'cmn+f3' },
        recognitionTimeoutMs: 1200,
        synthesisTimeoutMs: 1500,
      }),
    );
  });

  it('adds an Aliyun profile: the vendor first, then its own fields with the Shanghai gateway filled in', async () => {
    let stored: SpeechProvider[] = [];
    server = serveAssistant(
      { 'GET /api/project/p1/assistants': ok({ items: [], total: 0, page: 1, pageSize: 20 }) },
      (request) => {
        if (request.url !== URL) return undefined;
        if (request.method === 'POST') {
          const sent = request.body as Record<string, string>;
          stored = [
            {
              ...whisper,
              id: 'sp3',
              name: sent.name as string,
              vendor: 'aliyun_nls',
              baseUrl: sent.baseUrl as string,
              model: '',
              appId: sent.appId as string,
              keyId: sent.keyId as string,
              apiKeyHint: '3210',
            },
          ];
          return ok(stored[0]);
        }
        return profiles(...stored);
      },
    );
    const page = await openSpeechPage();
    fireEvent.click(await within(page).findByRole('button', { name: '添加语音识别配置' }));
    const drawer = await screen.findByRole('dialog');

    fireEvent.mouseDown(within(drawer).getByLabelText('服务类型'));
    fireEvent.click(await screen.findByTitle('阿里云实时语音识别'));
    // The OpenAI fields are gone; Aliyun's own are there, the gateway pre-filled.
    expect(await within(drawer).findByLabelText('Appkey')).toBeTruthy();
    expect(within(drawer).queryByLabelText('识别模型')).toBeNull();
    expect((within(drawer).getByLabelText('网关地址') as HTMLInputElement).value).toBe(
      'wss://nls-gateway-cn-shanghai.aliyuncs.com/ws/v1',
    );

    fireEvent.change(within(drawer).getByLabelText('配置名称'), { target: { value: '阿里云识别' } });
    fireEvent.change(within(drawer).getByLabelText('Appkey'), { target: { value: 'appkeyCallPilot01' } });
    fireEvent.change(within(drawer).getByLabelText('AccessKey ID'), {
      target: { value: 'LTAI5tProfileKeyId' },
    });
    fireEvent.change(within(drawer).getByLabelText('AccessKey Secret'), {
      target: { value: 'nlsSecret-9f8e7d6c5b4a3210' },
    });
    fireEvent.click(within(drawer).getByRole('button', { name: '保存' }));

    expect(await within(page).findByText('阿里云识别')).toBeTruthy();
    expect(
      within(page).getByText('阿里云实时语音识别 · wss://nls-gateway-cn-shanghai.aliyuncs.com/ws/v1'),
    ).toBeTruthy();
    expect(within(page).getByText('AccessKey Secret：已保存（…3210）')).toBeTruthy();
    expect(server.requests.find((request) => request.method === 'POST')?.body).toEqual({
      name: '阿里云识别',
      vendor: 'aliyun_nls',
      appId: 'appkeyCallPilot01',
      keyId: 'LTAI5tProfileKeyId',
      baseUrl: 'wss://nls-gateway-cn-shanghai.aliyuncs.com/ws/v1',
      apiKey: 'nlsSecret-9f8e7d6c5b4a3210',
    });
  });

  it('checks a vendor’s fields with its own rules before asking the server', async () => {
    server = serveAssistant({
      'GET /api/project/p1/assistants': ok({ items: [], total: 0, page: 1, pageSize: 20 }),
      [`GET ${URL}`]: profiles(),
    });
    const page = await openSpeechPage();
    fireEvent.click(await within(page).findByRole('button', { name: '添加语音识别配置' }));
    const drawer = await screen.findByRole('dialog');
    fireEvent.mouseDown(within(drawer).getByLabelText('服务类型'));
    fireEvent.click(await screen.findByTitle('腾讯云实时语音识别'));

    expect(((await within(drawer).findByLabelText('识别引擎')) as HTMLInputElement).value).toBe('8k_zh');
    fireEvent.change(within(drawer).getByLabelText('配置名称'), { target: { value: '腾讯云' } });
    fireEvent.change(within(drawer).getByLabelText('AppID'), { target: { value: 'app-1300' } });
    fireEvent.change(within(drawer).getByLabelText('识别引擎'), { target: { value: '16k_zh' } });
    fireEvent.click(within(drawer).getByRole('button', { name: '保存' }));

    expect(await within(drawer).findByText('AppID 须为数字')).toBeTruthy();
    expect(within(drawer).getByText('识别引擎须为 8k 开头的电话引擎，如 8k_zh')).toBeTruthy();
    expect(within(drawer).getByText('请输入SecretId')).toBeTruthy();
    expect(within(drawer).getByText('请输入SecretKey')).toBeTruthy();
    expect(server.requests.some((request) => request.method === 'POST')).toBe(false);

    // Back to FunASR: Tencent's errors go, and its mode starts at 2pass.
    fireEvent.mouseDown(within(drawer).getByLabelText('服务类型'));
    fireEvent.click(await screen.findByTitle('FunASR（自部署）'));
    expect(await within(drawer).findByLabelText('服务地址')).toBeTruthy();
    expect(within(drawer).queryByText('AppID 须为数字')).toBeNull();
    expect(within(drawer).getByText('2pass（流式 + 离线修正）')).toBeTruthy();
    expect(within(drawer).getByLabelText('访问令牌（可选）')).toBeTruthy();
  });
});
