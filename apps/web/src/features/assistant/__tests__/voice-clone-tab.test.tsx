import type { SynthesisProvider, VoiceClone } from '@callpilot/contracts';
import { syntheticReading } from '@callpilot/contracts/voice-sample-testing';
import { act, fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { toast } from 'sonner';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { AppProvider } from '@/app/provider';
import { type FakeReply, failure, ok, type RecordedRequest, startFakeServer } from '@/test/fake-server';
import { routeKey } from '@/test/render-route';
import { VoiceCloneTab } from '../components/voice-clone-tab';
import { decodeVoiceSample, encodeWav, parseWav } from '../utils/voice-sample-audio';
import { limits, signIn } from './assistant-fixtures';

// The audio decode boundary: Web Audio does not exist in jsdom, and what matters here is what the
// tab does with the samples it gets.
vi.mock('../utils/voice-sample-audio', async (original) => ({
  ...(await original<typeof import('../utils/voice-sample-audio')>()),
  decodeVoiceSample: vi.fn(),
}));
const decode = vi.mocked(decodeVoiceSample);

const URL_BASE = '/api/project/p1';
const ONE_READER = {
  samples: syntheticReading({ seconds: 12, sampleRate: 16000, voices: [{ f0: 200 }] }),
  sampleRate: 16000,
};
const TWO_READERS = {
  samples: syntheticReading({ seconds: 12, sampleRate: 16000, voices: [{ f0: 120 }, { f0: 210 }] }),
  sampleRate: 16000,
};
const SHORT = {
  samples: syntheticReading({ seconds: 6, sampleRate: 16000, voices: [{ f0: 200 }] }),
  sampleRate: 16000,
};

const profile = (over: Partial<SynthesisProvider>): SynthesisProvider => ({
  id: 'sp1',
  name: '百炼',
  vendor: 'cosyvoice',
  baseUrl: 'wss://dashscope.aliyuncs.com/api-ws/v1/inference',
  model: 'cosyvoice-v2',
  appId: '',
  keyId: '',
  hasApiKey: true,
  apiKeyHint: 'abcd',
  createdAt: '2026-03-01T02:00:00.000Z',
  updatedAt: '2026-03-01T02:00:00.000Z',
  ...over,
});
const PROFILES = [
  profile({}),
  profile({ id: 'sp2', name: '火山', vendor: 'volcengine', model: 'volcano_icl', appId: '7300001234' }),
  profile({ id: 'sp3', name: '本地 TTS', vendor: 'openai_compatible' }),
];
const clone = (over: Partial<VoiceClone>): VoiceClone => ({
  id: 'c1',
  name: '客服小李',
  providerId: 'sp1',
  vendor: 'cosyvoice',
  status: 'ready',
  failureReason: '',
  sampleDurationMs: 12000,
  createdAt: '2026-03-01T02:00:00.000Z',
  updatedAt: '2026-03-01T02:00:00.000Z',
  ...over,
});
const paged = <T,>(items: T[]) => ok({ items, total: items.length, page: 1, pageSize: 100 });

let server: ReturnType<typeof startFakeServer> | undefined;
function serve(
  replies: Record<
    string,
    (request: RecordedRequest) => ReturnType<typeof ok> | Promise<ReturnType<typeof ok>>
  >,
  balance = limits,
) {
  server = startFakeServer(async (request) => {
    const all: Record<string, (request: RecordedRequest) => FakeReply | Promise<FakeReply>> = {
      [`GET ${URL_BASE}/balance-limit`]: () => ok(balance),
      [`GET ${URL_BASE}/synthesis-providers`]: () => paged(PROFILES),
      ...replies,
    };
    const reply = all[routeKey(request)];
    return reply ? reply(request) : failure(404, '请求地址出错');
  });
  return server;
}
const requestsTo = (method: string, path: string) =>
  server?.requests.filter((r) => r.method === method && r.url === `${URL_BASE}${path}`) ?? [];

beforeEach(() => {
  signIn();
  vi.spyOn(toast, 'success');
  Object.assign(URL, { createObjectURL: vi.fn(() => 'blob:sample'), revokeObjectURL: vi.fn() });
});
afterEach(() => {
  server?.stop();
  server = undefined;
  vi.useRealTimers();
});

const renderTab = () =>
  render(
    <AppProvider>
      <VoiceCloneTab />
    </AppProvider>,
  );

async function openDialog() {
  fireEvent.click(await screen.findByRole('button', { name: '新建复刻' }));
  return screen.findByRole('dialog', { name: '新建复刻' });
}

async function chooseProfile(dialog: HTMLElement, title: string) {
  fireEvent.mouseDown(within(dialog).getByLabelText('语音合成配置'));
  fireEvent.click(await screen.findByTitle(title));
}

function uploadFile(dialog: HTMLElement, name = 'sample.wav') {
  const input = dialog.querySelector('input[type="file"]');
  if (!(input instanceof HTMLInputElement)) throw new Error('no file input');
  fireEvent.change(input, { target: { files: [new File(['RIFF'], name, { type: 'audio/wav' })] } });
}

describe('声音复刻 tab', () => {
  it('explains that cloning is not open, with no way to start one, when the 声音克隆 limit is 0', async () => {
    serve({}, { ...limits, hasBalance: true, ttsCloneLimit: 0 });
    renderTab();
    expect(await screen.findByText('当前项目未开通声音克隆功能')).toBeTruthy();
    expect(screen.queryByRole('button', { name: '新建复刻' })).toBeNull();
    expect(requestsTo('GET', '/voice-clones')).toHaveLength(0);
  });

  it('lists clones with their status, and asks again every 5 s while one is 复刻中', async () => {
    vi.useFakeTimers({ shouldAdvanceTime: true });
    let status: VoiceClone['status'] = 'training';
    serve({
      [`GET ${URL_BASE}/voice-clones`]: () =>
        paged([
          clone({ id: 'c1', name: '客服小李', status }),
          clone({
            id: 'c2',
            name: '小王',
            status: 'failed',
            failureReason: '阿里云百炼未通过该音色的审核（UNDEPLOYED）',
          }),
        ]),
    });
    renderTab();
    const row = async (name: string) => (await screen.findByText(name)).closest('tr') as HTMLElement;
    expect(within(await row('客服小李')).getByText('复刻中')).toBeTruthy();
    expect(within(await row('小王')).getByText('失败')).toBeTruthy();
    expect(screen.getByText('阿里云百炼未通过该音色的审核（UNDEPLOYED）')).toBeTruthy();
    expect(within(await row('客服小李')).getByText('百炼')).toBeTruthy();

    status = 'ready';
    const before = requestsTo('GET', '/voice-clones').length;
    await act(async () => {
      vi.advanceTimersByTime(5000);
    });
    await waitFor(() =>
      expect(
        within(screen.getByText('客服小李').closest('tr') as HTMLElement).getByText('可用'),
      ).toBeTruthy(),
    );
    expect(requestsTo('GET', '/voice-clones').length).toBe(before + 1);
    // Nothing training any more: no more polling.
    await act(async () => {
      vi.advanceTimersByTime(15_000);
    });
    expect(requestsTo('GET', '/voice-clones').length).toBe(before + 1);
  });

  it('checks an uploaded sample in the browser, names each problem, and uploads only one that passes', async () => {
    let stored: VoiceClone[] = [];
    let finishUpload = () => {};
    const uploaded = new Promise<void>((resolve) => {
      finishUpload = resolve;
    });
    serve({
      [`GET ${URL_BASE}/voice-clones`]: () => paged(stored),
      [`POST ${URL_BASE}/voice-clones`]: async (request) => {
        request.config.onUploadProgress?.({ loaded: 40, total: 100, bytes: 40, lengthComputable: true });
        await uploaded;
        stored = [clone({ id: 'c9', name: '客服小李', status: 'training' })];
        return ok(stored[0]);
      },
    });
    renderTab();
    expect(await screen.findByText('还没有复刻音色')).toBeTruthy();
    const dialog = await openDialog();
    const submit = within(dialog).getByRole('button', { name: '上传并复刻' }) as HTMLButtonElement;
    expect(submit.disabled).toBe(true);

    // Only the profiles that can clone are offered.
    fireEvent.mouseDown(within(dialog).getByLabelText('语音合成配置'));
    expect(await screen.findByTitle('百炼（阿里云百炼 CosyVoice）')).toBeTruthy();
    expect(screen.getByTitle('火山（火山引擎语音合成）')).toBeTruthy();
    expect(screen.queryByTitle(/本地 TTS/)).toBeNull();
    fireEvent.click(screen.getByTitle('百炼（阿里云百炼 CosyVoice）'));
    fireEvent.change(within(dialog).getByLabelText('音色名称'), { target: { value: '客服小李' } });

    decode.mockResolvedValueOnce(SHORT);
    uploadFile(dialog);
    expect(await within(dialog).findByText('录音未通过检查，请按提示重新录制或上传')).toBeTruthy();
    expect(within(dialog).getByText('录音时长 6 秒，不足 10 秒：请连续朗读 10～20 秒')).toBeTruthy();
    expect(submit.disabled).toBe(true);

    decode.mockResolvedValueOnce(TWO_READERS);
    uploadFile(dialog);
    expect(
      await within(dialog).findByText(
        '录音中似乎有不止一个人的声音：请只保留一个人朗读的部分，避免他人插话或背景人声',
      ),
    ).toBeTruthy();
    expect(submit.disabled).toBe(true);

    decode.mockResolvedValueOnce(ONE_READER);
    uploadFile(dialog, '小李.wav');
    expect(await within(dialog).findByText('录音检查通过：小李.wav，时长 12.0 秒')).toBeTruthy();
    expect(within(dialog).getByLabelText('录音回放')).toBeTruthy();
    await waitFor(() => expect(submit.disabled).toBe(false));
    fireEvent.click(submit);

    await waitFor(() => expect(requestsTo('POST', '/voice-clones')).toHaveLength(1));
    expect(await within(dialog).findByText('正在上传录音…')).toBeTruthy();
    expect(within(dialog).getByRole('progressbar').getAttribute('aria-valuenow')).toBe('40');
    finishUpload();
    const [body] = requestsTo('POST', '/voice-clones').map((request) => request.body as FormData);
    if (!body) throw new Error('no upload');
    expect(body.get('name')).toBe('客服小李');
    expect(body.get('providerId')).toBe('sp1');
    expect(body.get('speakerId')).toBeNull();
    const sample = body.get('sample') as File;
    expect(sample.type).toBe('audio/wav');
    // What goes up is the checked audio itself, as a 16-bit WAV at its own rate.
    expect(parseWav(await sample.arrayBuffer()).sampleRate).toBe(16000);
    expect(sample.size).toBe(44 + ONE_READER.samples.length * 2);

    await waitFor(() => expect(screen.queryByRole('dialog', { name: '新建复刻' })).toBeNull());
    expect(toast.success).toHaveBeenCalledWith('已提交复刻，复刻完成后即可在小助手中选用');
    expect(await screen.findByText('复刻中')).toBeTruthy();
  });

  // One retry: under a loaded CI worker, antd's select and form state have occasionally not settled
  // within the waits below (the component's own race, a clone sent without its 音色 ID, is fixed).
  it('asks for the Volcengine speaker id, and shows the server’s refusal in the dialog', {
    retry: 1,
  }, async () => {
    let posts = 0;
    serve({
      [`GET ${URL_BASE}/voice-clones`]: () => paged([]),
      [`POST ${URL_BASE}/voice-clones`]: () => {
        posts++;
        return failure(
          400,
          '字段 speakerId：该音色 ID 已被复刻音色「小张」使用，请先删除它或换一个音色 ID',
          'VALIDATION_FAILED',
        );
      },
    });
    renderTab();
    const dialog = await openDialog();
    await chooseProfile(dialog, '火山（火山引擎语音合成）');
    fireEvent.change(within(dialog).getByLabelText('音色名称'), { target: { value: '小张二号' } });
    decode.mockResolvedValueOnce(ONE_READER);
    uploadFile(dialog);
    await within(dialog).findByText(/录音检查通过/);
    const submit = within(dialog).getByRole('button', { name: '上传并复刻' }) as HTMLButtonElement;
    // The button opens once the sample check has settled; a click before that does nothing.
    await waitFor(() => expect(submit.disabled).toBe(false), { timeout: 10_000 });
    fireEvent.click(submit);
    // Refused in the browser: the speaker id's form item turns red (antd's message under it, and the
    // input's aria-invalid, can wait on a motion frame jsdom does not always run) and nothing was sent.
    await waitFor(
      () =>
        expect(
          within(dialog)
            .getByLabelText('音色 ID')
            .closest('.ant-form-item')
            ?.classList.contains('ant-form-item-has-error'),
        ).toBe(true),
      { timeout: 10_000 },
    );
    expect(posts).toBe(0);
    fireEvent.change(within(dialog).getByLabelText('音色 ID'), { target: { value: 'abc' } });
    expect(await within(dialog).findByText('音色 ID 须为火山引擎控制台中的 S_ 开头的音色 ID')).toBeTruthy();
    fireEvent.change(within(dialog).getByLabelText('音色 ID'), { target: { value: 'S_slot1' } });
    fireEvent.click(submit);
    expect(
      await within(dialog).findByText(
        '字段 speakerId：该音色 ID 已被复刻音色「小张」使用，请先删除它或换一个音色 ID',
      ),
    ).toBeTruthy();
    const sent = requestsTo('POST', '/voice-clones').map((request) => request.body as FormData);
    expect(sent.map((body) => body.get('speakerId'))).toEqual(['S_slot1']);
  });

  it('records in the browser and checks the recording like a file', async () => {
    const tracks = [{ stop: vi.fn() }];
    vi.stubGlobal('navigator', {
      ...navigator,
      mediaDevices: { getUserMedia: vi.fn(async () => ({ getTracks: () => tracks })) },
    });
    class FakeRecorder {
      state = 'inactive';
      mimeType = 'audio/webm';
      ondataavailable: ((event: { data: Blob }) => void) | null = null;
      onstop: (() => void) | null = null;
      start() {
        this.state = 'recording';
      }
      stop() {
        this.state = 'inactive';
        this.ondataavailable?.({ data: new Blob(['opus'], { type: 'audio/webm' }) });
        this.onstop?.();
      }
    }
    vi.stubGlobal('MediaRecorder', FakeRecorder);
    serve({ [`GET ${URL_BASE}/voice-clones`]: () => paged([]) });
    renderTab();
    const dialog = await openDialog();
    decode.mockResolvedValueOnce(ONE_READER);
    fireEvent.click(within(dialog).getByRole('button', { name: '开始录音' }));
    fireEvent.click(await within(dialog).findByRole('button', { name: /^停止录音/ }));
    expect(await within(dialog).findByText('录音检查通过：浏览器录音，时长 12.0 秒')).toBeTruthy();
    expect(decode.mock.calls.at(-1)?.[0]).toBeInstanceOf(Blob);
    expect(tracks[0]?.stop).toHaveBeenCalled();
    vi.unstubAllGlobals();
  });

  it('deletes a clone after confirming; members only read', async () => {
    serve({
      [`GET ${URL_BASE}/voice-clones`]: () => paged([clone({})]),
      [`DELETE ${URL_BASE}/voice-clones/c1`]: () => ok(null),
    });
    renderTab();
    fireEvent.click(await screen.findByRole('button', { name: '删除「客服小李」' }));
    fireEvent.click(await screen.findByRole('button', { name: '删除' }));
    await waitFor(() => expect(requestsTo('DELETE', '/voice-clones/c1')).toHaveLength(1));
    expect(toast.success).toHaveBeenCalledWith('已删除复刻音色「客服小李」');
  });

  it('shows members the list without 新建复刻 or 删除', async () => {
    signIn({ member: true });
    serve({ [`GET ${URL_BASE}/voice-clones`]: () => paged([clone({})]) });
    renderTab();
    expect(await screen.findByText('客服小李')).toBeTruthy();
    expect(screen.getByText(/仅项目所有者或管理员可以复刻或删除声音/)).toBeTruthy();
    expect(screen.queryByRole('button', { name: '新建复刻' })).toBeNull();
    expect(screen.queryByRole('button', { name: /删除/ })).toBeNull();
  });
});

describe('voice sample audio', () => {
  it('encodes 16-bit mono WAV and reads it back at its own rate', async () => {
    const samples = new Float32Array([0, 0.5, -0.5, 1, -1]);
    const wav = encodeWav({ samples, sampleRate: 22050 });
    const back = parseWav(await wav.arrayBuffer());
    expect(back.sampleRate).toBe(22050);
    expect(Array.from(back.samples).map((v) => Math.round(v * 100) / 100)).toEqual([0, 0.5, -0.5, 1, -1]);
    expect(() => parseWav(new TextEncoder().encode('ID3 mp3 data').buffer)).toThrow(
      '不是有效的 WAV 文件，请上传 WAV 格式的录音',
    );
  });
});
