import { randomUUID } from 'node:crypto';
import { assistantConfig } from '@callpilot/contracts';
import { eq } from 'drizzle-orm';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, loginAs, seedUser, testEnv } from '../../../test/helpers';
import { assistants, assistantVersions, memberships, speechProviders } from '../../db/schema';
import {
  type FakeTranscriptionServer,
  startFakeTranscriptionServer,
} from '../../engine/speech/fake-transcription-server';
import { aliyunTokenUrlFor, recognizerFor } from '../../engine/speech/recognizer';
import { type FakeAliyunNls, startFakeAliyunNls } from '../../engine/speech/testing/aliyun-nls-server';
import { type FunAsrServer, startFunAsrServer } from '../../engine/speech/testing/funasr-server';
import { startTencentAsrServer, type TencentAsrServer } from '../../engine/speech/testing/tencent-asr-server';
import { encodeWav } from '../../engine/speech/wav';
import { loadAppSecret } from '../../lib/secret-box';
import { resolveSpeechProvider } from './speech-providers.service';

const API_KEY = 'sk-asr-live-abcdefghijklmnop4321';
const APP_SECRET = 'test-app-secret-0123456789abcdef-0123';
const MODEL = 'whisper-large-v3';

type TestApp = Awaited<ReturnType<typeof createTestApp>>;
let current: TestApp | undefined;
let upstream: FakeTranscriptionServer;
let logs: string[] = [];

beforeAll(async () => {
  upstream = await startFakeTranscriptionServer({ apiKey: API_KEY, model: MODEL });
});
afterAll(() => upstream.close());
afterEach(async () => {
  await current?.app.close();
  current = undefined;
  logs = [];
  upstream.requests.length = 0;
  upstream.hear(() => '');
});

async function setup() {
  current = await createTestApp({
    env: { APP_SECRET },
    // Everything the server logs, at every level, to prove the key never reaches it.
    logger: { level: 'trace', stream: { write: (line: string) => logs.push(line) } },
  });
  const { db, app } = current;
  const owner = await seedUser(db, { email: 'owner@example.com' });
  const outsider = await seedUser(db, { email: 'outsider@example.com' });
  const member = await seedUser(db, { email: 'member@example.com', project: null });
  await db.insert(memberships).values({ projectId: owner.projectId, userId: member.userId, role: 'member' });
  return {
    ...current,
    projectId: owner.projectId,
    url: `/api/project/${owner.projectId}/speech-providers`,
    owner,
    outsider,
    headers: await loginAs(app, 'owner@example.com'),
    memberHeaders: await loginAs(app, 'member@example.com'),
    outsiderHeaders: await loginAs(app, 'outsider@example.com'),
  };
}

const body = (over: Record<string, unknown> = {}) => ({
  name: 'Whisper',
  baseUrl: upstream.baseUrl,
  model: MODEL,
  apiKey: API_KEY,
  ...over,
});

async function create(
  t: Awaited<ReturnType<typeof setup>>,
  over: Record<string, unknown> = {},
): Promise<string> {
  const res = await t.app.inject({ method: 'POST', url: t.url, headers: t.headers, payload: body(over) });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().data.id;
}

async function insertAssistant(t: Awaited<ReturnType<typeof setup>>, name: string, hearingId: string | null) {
  const id = randomUUID();
  await t.db.insert(assistants).values({
    id,
    projectId: t.projectId,
    name,
    use: 'outbound',
    config: assistantConfig.parse({ hearing: { providerId: hearingId } }),
    createdBy: t.owner.userId,
  });
  return id;
}

describe('speech recognition profiles', () => {
  it('creates, lists and reads without ever returning the key; stores it encrypted', async () => {
    const t = await setup();
    const created = await t.app.inject({
      method: 'POST',
      url: t.url,
      headers: t.headers,
      payload: body({ baseUrl: `${upstream.baseUrl}/` }),
    });
    expect(created.statusCode).toBe(200);
    expect(created.json().data).toMatchObject({
      name: 'Whisper',
      vendor: 'openai_compatible',
      baseUrl: upstream.baseUrl,
      model: MODEL,
      hasApiKey: true,
      apiKeyHint: '4321',
    });
    expect(created.json().data).not.toHaveProperty('apiKey');

    const list = await t.app.inject({ method: 'GET', url: `${t.url}?pageSize=1`, headers: t.headers });
    expect(list.json().data).toMatchObject({ total: 1, page: 1, pageSize: 1, items: [{ name: 'Whisper' }] });
    const one = await t.app.inject({
      method: 'GET',
      url: `${t.url}/${created.json().data.id}`,
      headers: t.headers,
    });
    expect(one.json().data.apiKeyHint).toBe('4321');

    const [row] = await t.db.select().from(speechProviders);
    expect(row?.apiKeyEncrypted).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/);
    for (const text of [created.body, list.body, one.body, row?.apiKeyEncrypted ?? '', logs.join('\n')]) {
      expect(text).not.toContain(API_KEY);
    }
    expect(logs.length).toBeGreaterThan(3);
  });

  it('update keeps the stored key when apiKey is empty, replaces or clears it on request', async () => {
    const t = await setup();
    const id = await create(t);
    const secret = loadAppSecret(testEnv({ APP_SECRET }));
    const put = (payload: object) =>
      t.app.inject({ method: 'PUT', url: `${t.url}/${id}`, headers: t.headers, payload });

    const { apiKey: _omitted, ...withoutKey } = body();
    const renamed = await put({ ...withoutKey, name: 'Whisper 大模型' });
    expect(renamed.json().data).toMatchObject({
      name: 'Whisper 大模型',
      hasApiKey: true,
      apiKeyHint: '4321',
    });
    await put(body({ apiKey: '' }));
    expect((await resolveSpeechProvider(t.db, secret, t.projectId, id))?.apiKey).toBe(API_KEY);

    expect((await put(body({ apiKey: 'sk-new-asr-key-8765' }))).json().data.apiKeyHint).toBe('8765');
    expect(await resolveSpeechProvider(t.db, secret, t.projectId, id)).toEqual({
      vendor: 'openai_compatible',
      baseUrl: upstream.baseUrl,
      model: MODEL,
      appId: '',
      keyId: '',
      apiKey: 'sk-new-asr-key-8765',
    });
    expect((await put(body({ apiKey: '', clearApiKey: true }))).json().data).toMatchObject({
      hasApiKey: false,
      apiKeyHint: '',
    });
    expect((await resolveSpeechProvider(t.db, secret, t.projectId, id))?.apiKey).toBe('');
  });

  it('bad input: 400 with a Chinese message naming the field, and nothing is stored', async () => {
    const t = await setup();
    const post = (over: Record<string, unknown>) =>
      t.app.inject({ method: 'POST', url: t.url, headers: t.headers, payload: body(over) });
    for (const [over, message] of [
      [{ baseUrl: 'ftp://example.com/v1' }, '字段 baseUrl：接口地址须为 http(s) 网址'],
      [{ name: '  ' }, '字段 name：请输入配置名称'],
      [{ model: undefined }, '字段 model：请输入识别模型'],
      [{ vendor: 'azure' }, '字段 vendor：语音识别服务类型不支持'],
      [{ apiKey: 'k'.repeat(301) }, '字段 apiKey：API Key不能超过 300 个字符'],
    ] as const) {
      const res = await post(over);
      expect(res.statusCode, message).toBe(400);
      expect(res.json().message).toContain(message);
    }
    expect(await t.db.select().from(speechProviders)).toHaveLength(0);

    await create(t);
    const twin = await post({});
    expect(twin.statusCode).toBe(409);
    expect(twin.json().message).toBe('已存在同名的语音识别配置「Whisper」');
    expect(await t.db.select().from(speechProviders)).toHaveLength(1);
  });

  it('a member reads and tests the profiles but cannot create, change or delete them', async () => {
    const t = await setup();
    const id = await create(t);
    upstream.hear(() => '您好');
    const as = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: object) =>
      t.app.inject({ method, url, headers: t.memberHeaders, ...(payload ? { payload } : {}) });

    expect((await as('GET', t.url)).json().data.total).toBe(1);
    expect((await as('POST', `${t.url}/${id}/test`)).json().data.ok).toBe(true);
    for (const res of [
      await as('POST', t.url, body({ name: '成员新建' })),
      await as('PUT', `${t.url}/${id}`, body({ name: '成员改名' })),
      await as('DELETE', `${t.url}/${id}`),
    ]) {
      expect(res.statusCode).toBe(403);
      expect(res.json().message).toBe('仅项目所有者或管理员可以管理语音识别配置');
    }
    const rows = await t.db.select().from(speechProviders);
    expect(rows.map((row) => row.name)).toEqual(['Whisper']);
  });

  it('another project’s member can neither read, change, test nor delete this project’s profiles', async () => {
    const t = await setup();
    const id = await create(t);
    for (const [method, path] of [
      ['GET', t.url],
      ['GET', `${t.url}/${id}`],
      ['POST', t.url],
      ['PUT', `${t.url}/${id}`],
      ['DELETE', `${t.url}/${id}`],
      ['POST', `${t.url}/${id}/test`],
    ] as const) {
      const res = await t.app.inject({
        method,
        url: path,
        headers: t.outsiderHeaders,
        payload: body({ name: '偷改' }),
      });
      expect(res.statusCode, `${method} ${path}`).toBe(403);
    }
    // Through their own project, the id of ours is simply not there.
    const ownUrl = `/api/project/${t.outsider.projectId}/speech-providers/${id}`;
    for (const method of ['GET', 'PUT', 'DELETE'] as const) {
      const res = await t.app.inject({ method, url: ownUrl, headers: t.outsiderHeaders, payload: body() });
      expect(res.statusCode, method).toBe(404);
      expect(res.json().message).toBe('语音识别配置不存在');
    }
    const test = await t.app.inject({ method: 'POST', url: `${ownUrl}/test`, headers: t.outsiderHeaders });
    expect(test.statusCode).toBe(404);
    expect((await t.db.select().from(speechProviders))[0]?.name).toBe('Whisper');
    expect(upstream.requests).toHaveLength(0);
    expect(
      await resolveSpeechProvider(t.db, loadAppSecret(testEnv({ APP_SECRET })), t.outsider.projectId, id),
    ).toBeNull();
  });

  it('refuses to delete a profile an assistant listens with (draft or published version), then deletes it', async () => {
    const t = await setup();
    const id = await create(t);
    const assistantId = await insertAssistant(t, '课程邀约', id);
    const remove = () => t.app.inject({ method: 'DELETE', url: `${t.url}/${id}`, headers: t.headers });

    const refused = await remove();
    expect(refused.statusCode).toBe(409);
    expect(refused.json().message).toBe(
      '该语音识别配置正被小助手「课程邀约」使用，请先在小助手中改用其他语音识别配置后再删除',
    );
    // The draft no longer listens with it, but calls still run published version 1, which does.
    await t.db.insert(assistantVersions).values({
      assistantId,
      version: 1,
      projectId: t.projectId,
      name: '课程邀约',
      use: 'outbound',
      config: assistantConfig.parse({ hearing: { providerId: id } }),
      draftRevision: 1,
    });
    await t.db
      .update(assistants)
      .set({ config: assistantConfig.parse({}), publishedVersion: 1 })
      .where(eq(assistants.id, assistantId));
    expect((await remove()).statusCode).toBe(409);

    await t.db.update(assistants).set({ deletedAt: new Date() }).where(eq(assistants.id, assistantId));
    expect((await remove()).statusCode).toBe(200);
    expect(await t.db.select().from(speechProviders)).toHaveLength(0);
    expect((await remove()).statusCode).toBe(404);
  });

  it('test: recognises the built-in 8 kHz sample through the stored key and reports text and latency', async () => {
    const t = await setup();
    const id = await create(t);
    upstream.hear((heard) => (heard.sampleRate === 8000 && heard.durationMs > 200 ? '您好。' : ''));
    const res = await t.app.inject({ method: 'POST', url: `${t.url}/${id}/test`, headers: t.headers });
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toMatchObject({
      ok: true,
      text: '您好。',
      message: '识别成功，样例语音「您好」识别为：「您好。」',
    });
    expect(res.json().data.latencyMs).toBeGreaterThanOrEqual(0);
    const [request] = upstream.requests;
    expect(request?.headers.authorization).toBe(`Bearer ${API_KEY}`);
    expect(request?.fields).toMatchObject({ model: MODEL, language: 'zh', response_format: 'json' });
    // "您好" spoken, not silence: a second or so of audible samples at telephone quality.
    expect(request?.utterance?.durationMs).toBeGreaterThan(300);
    expect(request?.utterance?.durationMs).toBeLessThan(3000);
    expect(request?.utterance?.pcm.some((sample) => Math.abs(sample) > 1000)).toBe(true);
  });

  it('test failures answer ok:false with a Chinese message and no secret', async () => {
    const t = await setup();
    const wrongKey = 'sk-wrong-asr-0000000000';
    const id = await create(t, { apiKey: wrongKey });
    const test = () => t.app.inject({ method: 'POST', url: `${t.url}/${id}/test`, headers: t.headers });
    const denied = await test();
    expect(denied.json().data).toMatchObject({
      ok: false,
      text: '',
      message: '语音识别服务拒绝了 API Key（HTTP 401），请检查语音识别配置中的 API Key',
    });
    expect(denied.body).not.toContain(wrongKey);

    await t.app.inject({ method: 'PUT', url: `${t.url}/${id}`, headers: t.headers, payload: body() });
    upstream.hear(() => ({ status: 503 }));
    expect((await test()).json().data).toMatchObject({
      ok: false,
      message: '语音识别服务暂时不可用（HTTP 503），请稍后再试',
    });
    expect(logs.join('\n')).not.toContain(API_KEY);
    expect(logs.join('\n')).not.toContain(wrongKey);
  });
});

/** A multipart/form-data body with one file, as the console's upload sends it. */
function multipart(fileName: string, bytes: Buffer) {
  const boundary = '----callpilot-test-boundary';
  const payload = Buffer.concat([
    Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${fileName}"\r\nContent-Type: audio/wav\r\n\r\n`,
    ),
    bytes,
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ]);
  return { payload, contentType: `multipart/form-data; boundary=${boundary}` };
}

/** A WAV of `seconds` of a 300 Hz tone at `rate`, with `channels` identical channels. */
function toneWav(seconds: number, rate: number, channels = 1): Buffer {
  const frames = Math.round(seconds * rate);
  const mono = new Int16Array(frames);
  for (let i = 0; i < frames; i++) mono[i] = Math.round(6000 * Math.sin((2 * Math.PI * 300 * i) / rate));
  if (channels === 1) return encodeWav(mono, rate);
  const wav = encodeWav(new Int16Array(frames * channels), rate);
  wav.writeUInt16LE(channels, 22);
  wav.writeUInt32LE(rate * channels * 2, 28);
  wav.writeUInt16LE(channels * 2, 32);
  for (let i = 0; i < frames; i++)
    for (let ch = 0; ch < channels; ch++) wav.writeInt16LE(mono[i] ?? 0, 44 + (i * channels + ch) * 2);
  return wav;
}

describe('测试 with an uploaded recording', () => {
  it('transcribes an uploaded WAV brought to 8 kHz mono, and refuses what is not one, or too long', async () => {
    const t = await setup();
    const id = await create(t);
    upstream.hear((heard) =>
      heard.sampleRate === 8000 && heard.durationMs === 1500 ? '我想咨询一下套餐' : '没听清',
    );
    const upload = (fileName: string, bytes: Buffer, headers = t.headers) => {
      const { payload, contentType } = multipart(fileName, bytes);
      return t.app.inject({
        method: 'POST',
        url: `${t.url}/${id}/test`,
        headers: { ...headers, 'content-type': contentType },
        payload,
      });
    };

    const heard = await upload('录音.wav', toneWav(1.5, 16000, 2));
    expect(heard.statusCode, heard.body).toBe(200);
    expect(heard.json().data).toMatchObject({
      ok: true,
      text: '我想咨询一下套餐',
      message: '识别成功，上传的录音识别为：「我想咨询一下套餐」',
    });
    const sent = upstream.requests.at(-1)?.utterance;
    expect(sent).toMatchObject({ sampleRate: 8000, channels: 1, durationMs: 1500 });
    expect(sent?.pcm.some((sample) => Math.abs(sample) > 3000)).toBe(true);

    // A member may test too: testing spends nothing the project did not already allow.
    expect((await upload('录音.wav', toneWav(1.5, 8000), t.memberHeaders)).json().data.ok).toBe(true);

    const requests = upstream.requests.length;
    for (const [fileName, bytes, message] of [
      ['录音.mp3', Buffer.from('ID3 not a wav at all'), '字段 file：仅支持 16 位 PCM 编码的 WAV 录音'],
      ['长录音.wav', toneWav(61, 8000), '字段 file：录音不能超过 60 秒'],
      ['空.wav', encodeWav(new Int16Array(0), 16000), '字段 file：录音中没有声音数据'],
    ] as const) {
      const res = await upload(fileName, bytes);
      expect(res.statusCode, message).toBe(400);
      expect(res.json().message).toBe(message);
    }
    expect(upstream.requests).toHaveLength(requests);
  });
});

describe('an assistant’s hearing', () => {
  it('names one of the project’s own profiles, and a call resolves it into a recogniser that hears', async () => {
    const t = await setup();
    const id = await create(t);
    const foreign = await t.app.inject({
      method: 'POST',
      url: `/api/project/${t.outsider.projectId}/speech-providers`,
      headers: t.outsiderHeaders,
      payload: body({ name: '别人的' }),
    });
    const assistantsUrl = `/api/project/${t.projectId}/assistants`;
    const save = (hearingId: string | null) =>
      t.app.inject({
        method: 'POST',
        url: assistantsUrl,
        headers: t.headers,
        payload: { name: `助手${hearingId ?? '无'}`, config: { hearing: { providerId: hearingId } } },
      });

    const stolen = await save(foreign.json().data.id);
    expect(stolen.statusCode).toBe(400);
    expect(stolen.json().message).toBe('字段 config.hearing.providerId：语音识别配置不存在或不属于本项目');

    const listening = await save(id);
    expect(listening.statusCode).toBe(200);
    expect(listening.json().data.config.hearing).toEqual({ providerId: id, hotwords: [] });
    const deaf = await save(null);
    expect(deaf.json().data.config.hearing).toEqual({ providerId: null, hotwords: [] });

    const ports = t.app.runtime.engine.ports;
    const call = await ports.assistants.forCall(t.projectId, listening.json().data.id, 'draft');
    const recognizer = await recognizerFor(ports.assistants, t.projectId, call.config);
    upstream.hear(() => '我要办宽带');
    const heard = await recognizer?.transcribe(
      { pcm: new Int16Array(8000).fill(1200), sampleRate: 8000 },
      { language: 'zh' },
    );
    expect(heard).toEqual({ text: '我要办宽带', durationMs: 1000 });

    const deafCall = await ports.assistants.forCall(t.projectId, deaf.json().data.id, 'draft');
    expect(await recognizerFor(ports.assistants, t.projectId, deafCall.config)).toBeNull();
  });
});

// ---- Streaming vendors: each against a local server speaking its protocol ----

const FUNASR_TOKEN = 'funasr-proxy-token-7f3e9a2b';
const ALIYUN = {
  appKey: 'appkeyCallPilot01',
  keyId: 'LTAI5tProfileKeyId',
  secret: 'nlsSecret-9f8e7d6c5b4a3210',
};
const TENCENT = {
  appId: '1300012345',
  secretId: 'AKIDprofileSecretId0001',
  secretKey: 'tcSecretKey-0a1b2c3d4e5f6789',
};
/** "您好" in the built-in voice is loud; silence and line noise are not. */
const spoken = (pcm: Int16Array) => pcm.some((sample) => Math.abs(sample) > 1000);

describe('streaming vendors', () => {
  let funasr: FunAsrServer;
  let nls: FakeAliyunNls;
  let tencent: TencentAsrServer;

  beforeAll(async () => {
    [funasr, nls, tencent] = await Promise.all([
      startFunAsrServer({ token: FUNASR_TOKEN, listen: ({ pcm }) => (spoken(pcm) ? '您好' : '') }),
      startFakeAliyunNls({
        accessKeys: { [ALIYUN.keyId]: ALIYUN.secret },
        appKey: ALIYUN.appKey,
        hear: ({ pcm }) => (spoken(pcm) ? '您好。' : ''),
      }),
      startTencentAsrServer({
        appId: TENCENT.appId,
        secretId: TENCENT.secretId,
        secretKey: TENCENT.secretKey,
        hear: ({ pcm }) => (spoken(pcm) ? '您好。' : ''),
      }),
    ]);
  });
  afterAll(() => Promise.all([funasr.close(), nls.close(), tencent.close()]));

  const testProfile = async (t: Awaited<ReturnType<typeof setup>>, id: string) => {
    const res = await t.app.inject({ method: 'POST', url: `${t.url}/${id}/test`, headers: t.headers });
    expect(res.statusCode, res.body).toBe(200);
    return res.json().data as { ok: boolean; text: string; message: string; latencyMs: number };
  };

  it('FunASR: a ws:// server with the default 2pass mode and an optional token; its test recognises the sample', async () => {
    const t = await setup();
    const id = await create(t, {
      name: '自建 FunASR',
      vendor: 'funasr',
      baseUrl: funasr.url,
      model: '',
      apiKey: FUNASR_TOKEN,
    });
    const read = await t.app.inject({ method: 'GET', url: `${t.url}/${id}`, headers: t.headers });
    expect(read.json().data).toMatchObject({
      vendor: 'funasr',
      baseUrl: funasr.url,
      model: '2pass',
      appId: '',
      keyId: '',
      hasApiKey: true,
    });

    const sessions = funasr.sessions.length;
    expect(await testProfile(t, id)).toMatchObject({ ok: true, text: '您好' });
    const session = funasr.sessions[sessions];
    expect(session?.headers.authorization).toBe(`Bearer ${FUNASR_TOKEN}`);
    expect(session?.config).toMatchObject({ audio_fs: 8000, wav_format: 'pcm' });

    // Without the token the proxy refuses the upgrade: the test says which field to fill in.
    const { apiKey: _token, ...withoutToken } = body({
      name: '自建 FunASR',
      vendor: 'funasr',
      baseUrl: funasr.url,
      model: 'online',
    });
    const put = await t.app.inject({
      method: 'PUT',
      url: `${t.url}/${id}`,
      headers: t.headers,
      payload: { ...withoutToken, clearApiKey: true },
    });
    expect(put.json().data).toMatchObject({ model: 'online', hasApiKey: false });
    const refused = await testProfile(t, id);
    expect(refused.ok).toBe(false);
    expect(refused.message).toContain('访问令牌');
    expect(logs.join('\n')).not.toContain(FUNASR_TOKEN);
  });

  it('Aliyun: Appkey and AccessKey ID are shown, the AccessKey Secret never; its test gets a token and recognises the sample', async () => {
    const t = await setup();
    const payload = {
      name: '阿里云',
      vendor: 'aliyun_nls',
      baseUrl: nls.gatewayUrl,
      appId: ALIYUN.appKey,
      keyId: ALIYUN.keyId,
      apiKey: ALIYUN.secret,
    };
    const created = await t.app.inject({ method: 'POST', url: t.url, headers: t.headers, payload });
    expect(created.statusCode, created.body).toBe(200);
    const id = created.json().data.id;
    expect(created.json().data).toMatchObject({
      vendor: 'aliyun_nls',
      baseUrl: nls.gatewayUrl,
      model: '',
      appId: ALIYUN.appKey,
      keyId: ALIYUN.keyId,
      hasApiKey: true,
      apiKeyHint: '3210',
    });

    const tokens = nls.tokenRequests.length;
    expect(await testProfile(t, id)).toMatchObject({
      ok: true,
      text: '您好。',
      message: '识别成功，样例语音「您好」识别为：「您好。」',
    });
    expect(nls.tokenRequests[tokens]?.params.AccessKeyId).toBe(ALIYUN.keyId);
    expect(nls.sessions.at(-1)?.received[0]?.header.appkey).toBe(ALIYUN.appKey);

    // Saving without the secret keeps it; a wrong one is named in the test's answer, never shown.
    const { apiKey: _secret, ...kept } = payload;
    const renamed = await t.app.inject({
      method: 'PUT',
      url: `${t.url}/${id}`,
      headers: t.headers,
      payload: { ...kept, name: '阿里云 上海' },
    });
    expect(renamed.json().data).toMatchObject({ name: '阿里云 上海', hasApiKey: true, apiKeyHint: '3210' });
    const secret = loadAppSecret(testEnv({ APP_SECRET }));
    expect((await resolveSpeechProvider(t.db, secret, t.projectId, id))?.apiKey).toBe(ALIYUN.secret);
    const wrongSecret = 'nlsSecret-wrong-000000000000';
    await t.app.inject({
      method: 'PUT',
      url: `${t.url}/${id}`,
      headers: t.headers,
      payload: { ...payload, apiKey: wrongSecret },
    });
    const denied = await testProfile(t, id);
    expect(denied).toMatchObject({ ok: false, text: '' });
    expect(denied.message).toContain('AccessKey Secret 不正确');

    const list = await t.app.inject({ method: 'GET', url: t.url, headers: t.headers });
    const [row] = await t.db.select().from(speechProviders);
    for (const text of [
      created.body,
      renamed.body,
      list.body,
      JSON.stringify(denied),
      row?.apiKeyEncrypted ?? '',
      logs.join('\n'),
    ]) {
      expect(text).not.toContain(ALIYUN.secret);
      expect(text).not.toContain(wrongSecret);
    }
  });

  it('Aliyun without a gateway address uses the Shanghai gateway', async () => {
    const t = await setup();
    const res = await t.app.inject({
      method: 'POST',
      url: t.url,
      headers: t.headers,
      payload: {
        name: '阿里云',
        vendor: 'aliyun_nls',
        appId: ALIYUN.appKey,
        keyId: ALIYUN.keyId,
        apiKey: ALIYUN.secret,
      },
    });
    expect(res.json().data.baseUrl).toBe('wss://nls-gateway-cn-shanghai.aliyuncs.com/ws/v1');
    expect(aliyunTokenUrlFor(res.json().data.baseUrl)).toBe('https://nls-meta.cn-shanghai.aliyuncs.com/');
    expect(aliyunTokenUrlFor('wss://nls-gateway-cn-beijing-internal.aliyuncs.com/ws/v1')).toBe(
      'https://nls-meta.cn-beijing.aliyuncs.com/',
    );
    // A proxy (or the local stand-in) answers CreateToken on its own origin.
    expect(aliyunTokenUrlFor(nls.gatewayUrl)).toBe(nls.tokenUrl);
  });

  it('Tencent: AppID, SecretId and the 8k_zh engine by default; its signed test recognises the sample', async () => {
    const t = await setup();
    const payload = {
      name: '腾讯云',
      vendor: 'tencent',
      baseUrl: tencent.url,
      appId: TENCENT.appId,
      keyId: TENCENT.secretId,
      apiKey: TENCENT.secretKey,
    };
    const created = await t.app.inject({ method: 'POST', url: t.url, headers: t.headers, payload });
    expect(created.statusCode, created.body).toBe(200);
    const id = created.json().data.id;
    expect(created.json().data).toMatchObject({
      vendor: 'tencent',
      baseUrl: tencent.url,
      model: '8k_zh',
      appId: TENCENT.appId,
      keyId: TENCENT.secretId,
      apiKeyHint: '6789',
    });

    const connections = tencent.connections.length;
    expect(await testProfile(t, id)).toMatchObject({ ok: true, text: '您好。' });
    const connection = tencent.connections[connections];
    expect(connection?.handshakeCode).toBe(0);
    expect(connection?.params).toMatchObject({ secretid: TENCENT.secretId, engine_model_type: '8k_zh' });

    const wrongKey = 'tcSecretKey-wrong-00000000000';
    await t.app.inject({
      method: 'PUT',
      url: `${t.url}/${id}`,
      headers: t.headers,
      payload: { ...payload, apiKey: wrongKey },
    });
    const denied = await testProfile(t, id);
    expect(denied.ok).toBe(false);
    expect(denied.message).toContain('AppID、SecretId 和 SecretKey');
    for (const text of [created.body, JSON.stringify(denied), logs.join('\n')]) {
      expect(text).not.toContain(TENCENT.secretKey);
      expect(text).not.toContain(wrongKey);
    }

    const defaults = await t.app.inject({
      method: 'POST',
      url: t.url,
      headers: t.headers,
      payload: { ...payload, name: '腾讯云默认', baseUrl: '', model: '' },
    });
    expect(defaults.json().data).toMatchObject({ baseUrl: 'asr.cloud.tencent.com', model: '8k_zh' });
  });

  it('bad input per vendor: 400 naming the field in Chinese, and nothing is stored', async () => {
    const t = await setup();
    const aliyun = {
      name: '阿里云',
      vendor: 'aliyun_nls',
      appId: ALIYUN.appKey,
      keyId: ALIYUN.keyId,
      apiKey: ALIYUN.secret,
    };
    const tencentBody = {
      name: '腾讯云',
      vendor: 'tencent',
      appId: TENCENT.appId,
      keyId: TENCENT.secretId,
      apiKey: TENCENT.secretKey,
    };
    const cases: [Record<string, unknown>, string][] = [
      [{ name: 'F', vendor: 'funasr' }, '字段 baseUrl：请输入服务地址'],
      [
        { name: 'F', vendor: 'funasr', baseUrl: 'http://10.0.0.5:10095' },
        '字段 baseUrl：服务地址须为 ws:// 或 wss:// 开头的地址',
      ],
      [
        { name: 'F', vendor: 'funasr', baseUrl: funasr.url, model: 'offline' },
        '字段 model：模式须为 2pass 或 online',
      ],
      [{ ...aliyun, appId: '' }, '字段 appId：请输入Appkey'],
      [{ ...aliyun, keyId: ' ' }, '字段 keyId：请输入AccessKey ID'],
      [{ ...aliyun, apiKey: undefined }, '字段 apiKey：请输入AccessKey Secret'],
      [
        { ...aliyun, baseUrl: 'https://nls-gateway-cn-shanghai.aliyuncs.com/ws/v1' },
        '字段 baseUrl：网关地址须为 ws:// 或 wss:// 开头的地址',
      ],
      [{ ...tencentBody, appId: 'app-125' }, '字段 appId：AppID 须为数字'],
      [{ ...tencentBody, keyId: '' }, '字段 keyId：请输入SecretId'],
      [{ ...tencentBody, apiKey: '' }, '字段 apiKey：请输入SecretKey'],
      [{ ...tencentBody, model: '16k_zh' }, '字段 model：识别引擎须为 8k 开头的电话引擎，如 8k_zh'],
      [{ ...tencentBody, baseUrl: 'https://asr.cloud.tencent.com/asr' }, '字段 baseUrl：服务地址须为域名'],
    ];
    for (const [payload, message] of cases) {
      const res = await t.app.inject({ method: 'POST', url: t.url, headers: t.headers, payload });
      expect(res.statusCode, message).toBe(400);
      expect(res.json().message).toContain(message);
      expect(res.body).not.toContain(ALIYUN.secret);
    }
    expect(await t.db.select().from(speechProviders)).toHaveLength(0);
  });

  it('switching a profile’s vendor drops the old vendor’s key, and asks for the new one’s secret', async () => {
    const t = await setup();
    const id = await create(t);
    const put = (payload: object) =>
      t.app.inject({ method: 'PUT', url: `${t.url}/${id}`, headers: t.headers, payload });

    const toAliyun = { name: 'Whisper', vendor: 'aliyun_nls', appId: ALIYUN.appKey, keyId: ALIYUN.keyId };
    const refused = await put(toAliyun);
    expect(refused.statusCode).toBe(400);
    expect(refused.json().message).toBe('字段 apiKey：请输入AccessKey Secret');
    expect((await t.db.select().from(speechProviders))[0]?.vendor).toBe('openai_compatible');

    // The OpenAI key must not become a FunASR proxy's bearer token.
    const toFunAsr = await put({ name: 'Whisper', vendor: 'funasr', baseUrl: funasr.url });
    expect(toFunAsr.json().data).toMatchObject({ vendor: 'funasr', model: '2pass', hasApiKey: false });

    const toTencent = await put({
      name: 'Whisper',
      vendor: 'tencent',
      appId: TENCENT.appId,
      keyId: TENCENT.secretId,
      apiKey: TENCENT.secretKey,
    });
    expect(toTencent.json().data).toMatchObject({
      vendor: 'tencent',
      baseUrl: 'asr.cloud.tencent.com',
      model: '8k_zh',
      hasApiKey: true,
    });
    // Back to FunASR: the Tencent identifiers go with the vendor.
    const back = await put({ name: 'Whisper', vendor: 'funasr', baseUrl: funasr.url, appId: TENCENT.appId });
    expect(back.json().data).toMatchObject({ appId: '', keyId: '', hasApiKey: false });
  });

  it('a call on a streaming profile hears through the vendor’s stream', async () => {
    const t = await setup();
    const id = await create(t, {
      vendor: 'tencent',
      baseUrl: tencent.url,
      model: '',
      appId: TENCENT.appId,
      keyId: TENCENT.secretId,
      apiKey: TENCENT.secretKey,
    });
    const assistantId = await insertAssistant(t, '宽带回访', id);
    const ports = t.app.runtime.engine.ports;
    const call = await ports.assistants.forCall(t.projectId, assistantId, 'draft');
    const recognizer = await recognizerFor(ports.assistants, t.projectId, call.config);
    expect(recognizer?.openSession).toBeTypeOf('function');
    const session = recognizer?.openSession?.({ language: 'zh' });
    for (let i = 0; i < 10; i++) session?.write(new Int16Array(160).fill(3000));
    expect(await session?.finish()).toMatchObject({ text: '您好。' });
  });
});
