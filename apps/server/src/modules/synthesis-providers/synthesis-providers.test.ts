import { randomUUID } from 'node:crypto';
import { assistantConfig } from '@callpilot/contracts';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, loginAs, seedUser, testEnv } from '../../../test/helpers';
import {
  assistants,
  assistantVersions,
  memberships,
  speechSettings,
  synthesisProviders,
  voiceClones,
} from '../../db/schema';
import { startDashScopeTtsServer } from '../../engine/speech/testing/dashscope-tts-server';
import {
  levelOf,
  type OpenAISpeechServer,
  startOpenAISpeechServer,
} from '../../engine/speech/testing/openai-speech-server';
import { readMono, readWav } from '../../engine/speech/wav';
import { loadAppSecret } from '../../lib/secret-box';
import { resolveSynthesisProvider, SYNTHESIS_TEST_SENTENCE } from './synthesis-providers.service';

const API_KEY = 'sk-tts-live-abcdefghijklmnop4321';
const APP_SECRET = 'test-app-secret-0123456789abcdef-0123';
const MODEL = 'tts-1';
const DASHSCOPE_KEY = 'sk-dashscope-secret-00001111';

type TestApp = Awaited<ReturnType<typeof createTestApp>>;
let t: TestApp;
let upstream: OpenAISpeechServer;
const logs: string[] = [];
let seq = 0;

beforeAll(async () => {
  upstream = await startOpenAISpeechServer({ apiKey: API_KEY, models: [MODEL], msPerChar: 20 });
  t = await createTestApp({
    env: { APP_SECRET },
    // Everything the server logs, at every level, to prove no key reaches it.
    logger: { level: 'trace', stream: { write: (line: string) => logs.push(line) } },
  });
});
afterAll(async () => {
  await t.app.close();
  await upstream.close();
});

/** A fresh project with its owner, a plain member and an outsider owning another project. */
async function project() {
  const n = ++seq;
  const owner = await seedUser(t.db, { email: `owner${n}@example.com` });
  const outsider = await seedUser(t.db, { email: `outsider${n}@example.com` });
  const member = await seedUser(t.db, { email: `member${n}@example.com`, project: null });
  await t.db
    .insert(memberships)
    .values({ projectId: owner.projectId, userId: member.userId, role: 'member' });
  return {
    projectId: owner.projectId,
    owner,
    outsider,
    url: `/api/project/${owner.projectId}/synthesis-providers`,
    headers: await loginAs(t.app, `owner${n}@example.com`),
    memberHeaders: await loginAs(t.app, `member${n}@example.com`),
    outsiderHeaders: await loginAs(t.app, `outsider${n}@example.com`),
  };
}
type Project = Awaited<ReturnType<typeof project>>;

const body = (over: Record<string, unknown> = {}) => ({
  name: '自建合成',
  vendor: 'openai_compatible',
  baseUrl: upstream.baseUrl,
  model: MODEL,
  apiKey: API_KEY,
  ...over,
});

async function create(p: Project, over: Record<string, unknown> = {}): Promise<string> {
  const res = await t.app.inject({ method: 'POST', url: p.url, headers: p.headers, payload: body(over) });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().data.id;
}

const rowsOf = (projectId: string) =>
  t.db.select().from(synthesisProviders).where(eq(synthesisProviders.projectId, projectId));

async function insertAssistant(p: Project, name: string, provider: string) {
  const id = randomUUID();
  await t.db.insert(assistants).values({
    id,
    projectId: p.projectId,
    name,
    use: 'outbound',
    config: assistantConfig.parse({ voice: { provider, voiceId: 'alloy' } }),
    createdBy: p.owner.userId,
  });
  return id;
}

describe('speech synthesis profiles', () => {
  it('creates, lists and reads without ever returning the key; stores it encrypted; keeps it on an edit without one', async () => {
    const p = await project();
    const created = await t.app.inject({
      method: 'POST',
      url: p.url,
      headers: p.headers,
      payload: body({ baseUrl: `${upstream.baseUrl}/` }),
    });
    expect(created.statusCode).toBe(200);
    const id = created.json().data.id;
    expect(created.json().data).toMatchObject({
      name: '自建合成',
      vendor: 'openai_compatible',
      baseUrl: upstream.baseUrl,
      model: MODEL,
      appId: '',
      keyId: '',
      hasApiKey: true,
      apiKeyHint: '4321',
    });
    expect(created.json().data).not.toHaveProperty('apiKey');
    const list = await t.app.inject({ method: 'GET', url: p.url, headers: p.headers });
    expect(list.json().data).toMatchObject({ total: 1, items: [{ id, apiKeyHint: '4321' }] });

    const { apiKey: _omitted, ...withoutKey } = body();
    const renamed = await t.app.inject({
      method: 'PUT',
      url: `${p.url}/${id}`,
      headers: p.headers,
      payload: { ...withoutKey, name: '本地 CosyVoice' },
    });
    expect(renamed.json().data).toMatchObject({
      name: '本地 CosyVoice',
      hasApiKey: true,
      apiKeyHint: '4321',
    });
    const secret = loadAppSecret(testEnv({ APP_SECRET }));
    expect(await resolveSynthesisProvider(t.db, secret, p.projectId, id)).toEqual({
      vendor: 'openai_compatible',
      baseUrl: upstream.baseUrl,
      model: MODEL,
      appId: '',
      keyId: '',
      apiKey: API_KEY,
    });

    const [row] = await rowsOf(p.projectId);
    expect(row?.apiKeyEncrypted).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/);
    for (const text of [created.body, list.body, renamed.body, row?.apiKeyEncrypted ?? '', logs.join('\n')]) {
      expect(text).not.toContain(API_KEY);
    }
  });

  it('bad input per vendor: 400 naming the field in Chinese, and nothing is stored', async () => {
    const p = await project();
    const cases: [Record<string, unknown>, string][] = [
      [body({ name: '  ' }), '字段 name：请输入配置名称'],
      [body({ vendor: 'azure' }), '字段 vendor：语音合成服务类型不支持'],
      [body({ baseUrl: 'ftp://example.com/v1' }), '字段 baseUrl：接口地址须为 http(s) 网址'],
      [body({ model: '' }), '字段 model：请输入合成模型'],
      [
        { name: 'C', vendor: 'cosyvoice', model: 'qwen-tts', apiKey: DASHSCOPE_KEY },
        '字段 model：模型须为 cosyvoice 开头',
      ],
      [{ name: 'C', vendor: 'cosyvoice' }, '字段 apiKey：请输入API Key'],
      [
        { name: 'A', vendor: 'aliyun_nls', appId: 'app-key!', keyId: 'LTAI', apiKey: 's' },
        '字段 appId：Appkey 只能包含字母和数字',
      ],
      [{ name: 'T', vendor: 'tencent', appId: '1300', keyId: '', apiKey: 's' }, '字段 keyId：请输入SecretId'],
      [{ name: 'V', vendor: 'volcengine', appId: '123456' }, '字段 apiKey：请输入Access Token'],
    ];
    for (const [payload, message] of cases) {
      const res = await t.app.inject({ method: 'POST', url: p.url, headers: p.headers, payload });
      expect(res.statusCode, message).toBe(400);
      expect(res.json().message).toContain(message);
      expect(res.body).not.toContain(DASHSCOPE_KEY);
    }
    expect(await rowsOf(p.projectId)).toHaveLength(0);

    await create(p);
    const twin = await t.app.inject({ method: 'POST', url: p.url, headers: p.headers, payload: body() });
    expect(twin.statusCode).toBe(409);
    expect(twin.json().message).toBe('已存在同名的语音合成配置「自建合成」');
  });

  it('fills each vendor’s defaults, and a vendor switch drops the old vendor’s key', async () => {
    const p = await project();
    const cosy = await t.app.inject({
      method: 'POST',
      url: p.url,
      headers: p.headers,
      payload: { name: '百炼', vendor: 'cosyvoice', apiKey: DASHSCOPE_KEY, appId: '999' },
    });
    expect(cosy.json().data).toMatchObject({
      vendor: 'cosyvoice',
      baseUrl: 'wss://dashscope.aliyuncs.com/api-ws/v1/inference',
      model: 'cosyvoice-v2',
      // CosyVoice has no AppID: a stray one is not stored.
      appId: '',
      hasApiKey: true,
    });
    const id = cosy.json().data.id;
    const toOpenAI = await t.app.inject({
      method: 'PUT',
      url: `${p.url}/${id}`,
      headers: p.headers,
      payload: { name: '百炼', vendor: 'openai_compatible', baseUrl: upstream.baseUrl, model: MODEL },
    });
    // The DashScope key must not become a bearer token sent to another server.
    expect(toOpenAI.json().data).toMatchObject({ vendor: 'openai_compatible', hasApiKey: false });
    const refused = await t.app.inject({
      method: 'PUT',
      url: `${p.url}/${id}`,
      headers: p.headers,
      payload: { name: '百炼', vendor: 'tencent', appId: '1300012345', keyId: 'AKIDx' },
    });
    expect(refused.statusCode).toBe(400);
    expect(refused.json().message).toBe('字段 apiKey：请输入SecretKey');
    expect((await rowsOf(p.projectId))[0]?.vendor).toBe('openai_compatible');
  });

  it('a member reads and tests the profiles but cannot create, change or delete them', async () => {
    const p = await project();
    const id = await create(p);
    const as = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: object) =>
      t.app.inject({ method, url, headers: p.memberHeaders, ...(payload ? { payload } : {}) });

    expect((await as('GET', p.url)).json().data.total).toBe(1);
    expect((await as('POST', `${p.url}/${id}/test`)).json().data.ok).toBe(true);
    for (const res of [
      await as('POST', p.url, body({ name: '成员新建' })),
      await as('PUT', `${p.url}/${id}`, body({ name: '成员改名' })),
      await as('DELETE', `${p.url}/${id}`),
    ]) {
      expect(res.statusCode).toBe(403);
      expect(res.json().message).toBe('仅项目所有者或管理员可以管理语音合成配置');
    }
    expect((await rowsOf(p.projectId)).map((row) => row.name)).toEqual(['自建合成']);
  });

  it('another project’s member can neither read, change, test, preview nor delete this project’s profiles', async () => {
    const p = await project();
    const id = await create(p);
    const requestsBefore = upstream.requests.length;
    const base = `/api/project/${p.projectId}`;
    for (const [method, path, payload] of [
      ['GET', p.url, undefined],
      ['GET', `${p.url}/${id}`, undefined],
      ['POST', p.url, body({ name: '偷建' })],
      ['PUT', `${p.url}/${id}`, body({ name: '偷改' })],
      ['DELETE', `${p.url}/${id}`, undefined],
      ['POST', `${p.url}/${id}/test`, {}],
      ['GET', `${base}/voices`, undefined],
      ['POST', `${base}/tts/preview`, { text: '你好', voice: { provider: id, voiceId: 'alloy' } }],
    ] as const) {
      const res = await t.app.inject({
        method,
        url: path,
        headers: p.outsiderHeaders,
        ...(payload ? { payload } : {}),
      });
      expect(res.statusCode, `${method} ${path}`).toBe(403);
    }
    // Through their own project, our profile id is simply not there.
    const own = `/api/project/${p.outsider.projectId}`;
    for (const method of ['GET', 'PUT', 'DELETE'] as const) {
      const res = await t.app.inject({
        method,
        url: `${own}/synthesis-providers/${id}`,
        headers: p.outsiderHeaders,
        ...(method === 'PUT' ? { payload: body() } : {}),
      });
      expect(res.statusCode, method).toBe(404);
      expect(res.json().message).toBe('语音合成配置不存在');
    }
    const test = await t.app.inject({
      method: 'POST',
      url: `${own}/synthesis-providers/${id}/test`,
      headers: p.outsiderHeaders,
    });
    expect(test.statusCode).toBe(404);
    const preview = await t.app.inject({
      method: 'POST',
      url: `${own}/tts/preview`,
      headers: p.outsiderHeaders,
      payload: { text: '你好', voice: { provider: id, voiceId: 'alloy' } },
    });
    expect(preview.statusCode).toBe(400);
    expect(preview.json().message).toBe('字段 voice.provider：音色所属的语音合成配置不存在或不属于本项目');
    const voices = await t.app.inject({ method: 'GET', url: `${own}/voices`, headers: p.outsiderHeaders });
    expect(voices.json().data.some((voice: { provider: string }) => voice.provider === id)).toBe(false);
    expect(upstream.requests.length).toBe(requestsBefore);
    expect((await rowsOf(p.projectId))[0]?.name).toBe('自建合成');
  });

  it('refuses deletion while an assistant speaks with it, the fallback voice names it, or clones live on it', async () => {
    const p = await project();
    const id = await create(p);
    const remove = () => t.app.inject({ method: 'DELETE', url: `${p.url}/${id}`, headers: p.headers });

    const assistantId = await insertAssistant(p, '宽带回访', id);
    const byAssistant = await remove();
    expect(byAssistant.statusCode).toBe(409);
    expect(byAssistant.json().message).toBe(
      '该语音合成配置正被小助手「宽带回访」使用，请先在小助手中改用其他语音合成配置后再删除',
    );
    // The draft moved on, but calls still run published version 1, which speaks with it.
    await t.db.insert(assistantVersions).values({
      assistantId,
      version: 1,
      projectId: p.projectId,
      name: '宽带回访',
      use: 'outbound',
      config: assistantConfig.parse({ voice: { provider: id, voiceId: 'alloy' } }),
      draftRevision: 1,
    });
    await t.db
      .update(assistants)
      .set({ config: assistantConfig.parse({}), publishedVersion: 1 })
      .where(eq(assistants.id, assistantId));
    expect((await remove()).statusCode).toBe(409);
    await t.db.update(assistants).set({ deletedAt: new Date() }).where(eq(assistants.id, assistantId));

    await t.db.insert(speechSettings).values({
      projectId: p.projectId,
      settings: { synthesisFallback: { provider: id, voiceId: 'alloy' } },
    });
    const byFallback = await remove();
    expect(byFallback.statusCode).toBe(409);
    expect(byFallback.json().message).toBe(
      '该语音合成配置提供了本项目的备用音色，请先在语音配置中改选其他备用音色后再删除',
    );
    await t.db.delete(speechSettings).where(eq(speechSettings.projectId, p.projectId));

    await t.db.insert(voiceClones).values({
      id: randomUUID(),
      projectId: p.projectId,
      providerId: id,
      vendor: 'cosyvoice',
      name: '王经理',
      status: 'ready',
      sampleDurationMs: 12_000,
    });
    const byClone = await remove();
    expect(byClone.statusCode).toBe(409);
    expect(byClone.json().message).toBe(
      '该语音合成配置下还有 1 个复刻音色，请先在声音复刻中删除它们后再删除',
    );
    await t.db.delete(voiceClones).where(eq(voiceClones.providerId, id));

    expect((await remove()).statusCode).toBe(200);
    expect(await rowsOf(p.projectId)).toHaveLength(0);
    expect((await remove()).statusCode).toBe(404);
  });
});

describe('测试 a synthesis profile', () => {
  it('speaks the test sentence through the stored key and returns its first-audio and total time and a 16 kHz WAV', async () => {
    const p = await project();
    const id = await create(p);
    const before = upstream.requests.length;
    const res = await t.app.inject({ method: 'POST', url: `${p.url}/${id}/test`, headers: p.headers });
    expect(res.statusCode).toBe(200);
    const result = res.json().data;
    expect(result.ok).toBe(true);
    expect(result.message).toMatch(/^合成成功（音色 alloy）：首包 \d+ ms，共 [\d.]+ 秒音频$/);
    expect(result.firstAudioMs).toBeGreaterThanOrEqual(0);
    expect(result.latencyMs).toBeGreaterThanOrEqual(result.firstAudioMs);

    const wav = Buffer.from(result.audioBase64, 'base64');
    const info = readWav(wav);
    expect(info).toMatchObject({ sampleRate: 16000, channels: 1, bitsPerSample: 16 });
    const chars = [...SYNTHESIS_TEST_SENTENCE].length;
    expect(info.durationMs).toBe(chars * 20);
    // Every character of the sentence, in order, at the level the vendor spoke it.
    const { samples } = readMono(wav);
    expect(samples[Math.round(16000 * 0.03)]).toBeCloseTo(levelOf(1), -2);

    const request = upstream.requests[before];
    expect(request?.headers.authorization).toBe(`Bearer ${API_KEY}`);
    expect(request?.body).toMatchObject({
      input: SYNTHESIS_TEST_SENTENCE,
      voice: 'alloy',
      response_format: 'pcm',
    });

    await t.app.inject({
      method: 'POST',
      url: `${p.url}/${id}/test`,
      headers: p.headers,
      payload: { voiceId: 'my-cloned-voice' },
    });
    expect(upstream.requests.at(-1)?.body.voice).toBe('my-cloned-voice');
  });

  it('answers a failure with ok:false and a Chinese message naming 语音配置, without the key', async () => {
    const p = await project();
    const wrongKey = 'sk-wrong-tts-0000000000';
    const id = await create(p, { apiKey: wrongKey });
    const denied = await t.app.inject({ method: 'POST', url: `${p.url}/${id}/test`, headers: p.headers });
    expect(denied.json().data).toEqual({
      ok: false,
      latencyMs: expect.any(Number),
      firstAudioMs: null,
      audioBase64: '',
      message: '语音合成服务拒绝了 API Key（HTTP 401），请检查语音配置中的 API Key',
    });
    expect(denied.body).not.toContain(wrongKey);
    expect(logs.join('\n')).not.toContain(wrongKey);

    // A websocket vendor through the same test: CosyVoice over DashScope's protocol.
    const dashscope = await startDashScopeTtsServer({ apiKey: DASHSCOPE_KEY });
    try {
      const cosy = await create(p, {
        name: '百炼',
        vendor: 'cosyvoice',
        baseUrl: dashscope.url,
        model: '',
        apiKey: DASHSCOPE_KEY,
      });
      const spoken = await t.app.inject({ method: 'POST', url: `${p.url}/${cosy}/test`, headers: p.headers });
      expect(spoken.json().data).toMatchObject({ ok: true, firstAudioMs: expect.any(Number) });
      expect(readWav(Buffer.from(spoken.json().data.audioBase64, 'base64')).sampleRate).toBe(16_000);
      expect(dashscope.received[0]?.parameters).toMatchObject({
        voice: 'longxiaochun_v2',
        sample_rate: 16_000,
      });
      const wrong = await create(p, {
        name: '百炼（错的）',
        vendor: 'cosyvoice',
        baseUrl: dashscope.url,
        model: '',
        apiKey: 'sk-dashscope-wrong-99990000',
      });
      const refused = await t.app.inject({
        method: 'POST',
        url: `${p.url}/${wrong}/test`,
        headers: p.headers,
      });
      expect(refused.json().data).toMatchObject({ ok: false });
      expect(refused.json().data.message).toContain('API Key');
      expect(refused.body).not.toContain('sk-dashscope-wrong-99990000');
    } finally {
      await dashscope.close();
    }
  });
});

describe('voices and the assistant’s voice', () => {
  it('lists the offline voices, then each profile’s preset voices under its name, and previews one as a 16 kHz WAV', async () => {
    const p = await project();
    const id = await create(p, { name: '自建合成' });
    const base = `/api/project/${p.projectId}`;
    const voices = (
      await t.app.inject({ method: 'GET', url: `${base}/voices`, headers: p.memberHeaders })
    ).json().data as {
      provider: string;
      voiceId: string;
      name: string;
      providerName?: string;
      vendor?: string;
    }[];
    // The offline voices stay as they were, first.
    expect(voices[0]).toEqual({
      provider: 'espeak',
      voiceId: 'cmn',
      name: '普通话（标准）',
      language: 'zh-CN',
    });
    expect(voices).toContainEqual({
      provider: id,
      voiceId: 'alloy',
      name: 'Alloy（中性女声）',
      language: 'zh-CN',
      gender: 'female',
      providerName: '自建合成',
      vendor: 'openai_compatible',
    });

    const preview = await t.app.inject({
      method: 'POST',
      url: `${base}/tts/preview`,
      headers: p.memberHeaders,
      payload: { text: '您好，我是小李', voice: { provider: id, voiceId: 'nova', speed: 1.2, volume: 80 } },
    });
    expect(preview.statusCode).toBe(200);
    expect(preview.headers['content-type']).toBe('audio/wav');
    const info = readWav(preview.rawPayload);
    expect(info.sampleRate).toBe(16000);
    expect(info.durationMs).toBe(7 * 20);
    expect(Number(preview.headers['x-audio-duration-ms'])).toBe(info.durationMs);
    expect(upstream.requests.at(-1)?.body).toMatchObject({ voice: 'nova', speed: 1.2 });

    const offline = await t.app.inject({
      method: 'POST',
      url: `${base}/tts/preview`,
      headers: p.headers,
      payload: { text: '您好', voice: { provider: 'espeak', voiceId: 'cmn+f3' } },
    });
    expect(offline.statusCode).toBe(200);
  });

  it('a failing profile preview answers with the vendor’s Chinese message and no key', async () => {
    const p = await project();
    const wrongKey = 'sk-wrong-preview-000000000';
    const id = await create(p, { apiKey: wrongKey });
    const res = await t.app.inject({
      method: 'POST',
      url: `/api/project/${p.projectId}/tts/preview`,
      headers: p.headers,
      payload: { text: '您好', voice: { provider: id, voiceId: 'alloy' } },
    });
    expect(res.statusCode).toBe(502);
    expect(res.json().message).toBe('语音合成服务拒绝了 API Key（HTTP 401），请检查语音配置中的 API Key');
    expect(res.body).not.toContain(wrongKey);
  });

  it('an assistant speaks only with its own project’s profiles, and a call resolves the profile with its key', async () => {
    const p = await project();
    const id = await create(p);
    const foreign = await t.app.inject({
      method: 'POST',
      url: `/api/project/${p.outsider.projectId}/synthesis-providers`,
      headers: p.outsiderHeaders,
      payload: body({ name: '别人的' }),
    });
    const save = (provider: string, voiceId = 'alloy') =>
      t.app.inject({
        method: 'POST',
        url: `/api/project/${p.projectId}/assistants`,
        headers: p.headers,
        payload: { name: `助手${++seq}`, config: { voice: { provider, voiceId } } },
      });

    const stolen = await save(foreign.json().data.id);
    expect(stolen.statusCode).toBe(400);
    expect(stolen.json().message).toBe(
      '字段 config.voice.provider：音色所属的语音合成配置不存在或不属于本项目',
    );
    expect((await save('espeak', 'alloy')).json().message).toBe('字段 config.voice.voiceId：音色不存在');

    // A profile voice's id is the vendor's: free text, as self-hosted servers name their own.
    const speaking = await save(id, 'zh-female-custom');
    expect(speaking.statusCode).toBe(200);
    expect(speaking.json().data.config.voice).toMatchObject({ provider: id, voiceId: 'zh-female-custom' });
    // Stored before this issue: no provider means the offline voice.
    const old = await t.app.inject({
      method: 'POST',
      url: `/api/project/${p.projectId}/assistants`,
      headers: p.headers,
      payload: { name: `助手${++seq}`, config: { voice: { voiceId: 'cmn+m3' } } },
    });
    expect(old.json().data.config.voice).toMatchObject({ provider: 'espeak', voiceId: 'cmn+m3' });

    const ports = t.app.runtime.engine.ports;
    expect(await ports.assistants.synthesizer(p.projectId, id)).toMatchObject({
      vendor: 'openai_compatible',
      apiKey: API_KEY,
    });
    expect(await ports.assistants.synthesizer(p.outsider.projectId, id)).toBeNull();
  });
});
