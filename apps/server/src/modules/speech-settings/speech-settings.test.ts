import { assistantConfig } from '@callpilot/contracts';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, loginAs, seedUser } from '../../../test/helpers';
import { memberships, speechSettings } from '../../db/schema';
import {
  type FakeTranscriptionServer,
  startFakeTranscriptionServer,
} from '../../engine/speech/fake-transcription-server';
import { recognizerFor } from '../../engine/speech/recognizer';

const APP_SECRET = 'test-app-secret-0123456789abcdef-0123';

type TestApp = Awaited<ReturnType<typeof createTestApp>>;
let t: TestApp;
let whisper: FakeTranscriptionServer;
let seq = 0;

beforeAll(async () => {
  whisper = await startFakeTranscriptionServer({ hear: () => '我想办宽带' });
  t = await createTestApp({ env: { APP_SECRET } });
});
afterAll(async () => {
  await t.app.close();
  await whisper.close();
});

async function project() {
  const n = ++seq;
  const owner = await seedUser(t.db, { email: `owner${n}@example.com` });
  const outsider = await seedUser(t.db, { email: `outsider${n}@example.com` });
  const member = await seedUser(t.db, { email: `member${n}@example.com`, project: null });
  await t.db
    .insert(memberships)
    .values({ projectId: owner.projectId, userId: member.userId, role: 'member' });
  const headers = await loginAs(t.app, `owner${n}@example.com`);
  const base = `/api/project/${owner.projectId}`;
  const make = async (
    kind: 'speech-providers' | 'synthesis-providers',
    name: string,
    headersFor = headers,
    at = base,
  ) => {
    const payload =
      kind === 'speech-providers'
        ? { name, vendor: 'openai_compatible', baseUrl: whisper.baseUrl, model: 'whisper-1' }
        : { name, vendor: 'openai_compatible', baseUrl: 'http://127.0.0.1:9/v1', model: 'tts-1' };
    const res = await t.app.inject({ method: 'POST', url: `${at}/${kind}`, headers: headersFor, payload });
    expect(res.statusCode, res.body).toBe(200);
    return res.json().data.id as string;
  };
  return {
    projectId: owner.projectId,
    outsider,
    url: `${base}/speech-settings`,
    base,
    headers,
    memberHeaders: await loginAs(t.app, `member${n}@example.com`),
    outsiderHeaders: await loginAs(t.app, `outsider${n}@example.com`),
    make,
  };
}

const DEFAULTS = {
  recognitionPrimaryId: null,
  recognitionFallbackId: null,
  synthesisFallback: { provider: 'espeak', voiceId: 'cmn+f3' },
  recognitionTimeoutMs: 2000,
  synthesisTimeoutMs: 1500,
};

describe('语音配置: project speech settings', () => {
  it('reads the defaults, saves the project’s own profiles, and a member reads but cannot change them', async () => {
    const p = await project();
    expect((await t.app.inject({ method: 'GET', url: p.url, headers: p.memberHeaders })).json().data).toEqual(
      DEFAULTS,
    );
    const primary = await p.make('speech-providers', '主识别');
    const fallback = await p.make('speech-providers', '备用识别');
    const voice = await p.make('synthesis-providers', '合成');
    const wanted = {
      recognitionPrimaryId: primary,
      recognitionFallbackId: fallback,
      synthesisFallback: { provider: voice, voiceId: 'alloy' },
      recognitionTimeoutMs: 1200,
      synthesisTimeoutMs: 800,
    };
    const saved = await t.app.inject({ method: 'PUT', url: p.url, headers: p.headers, payload: wanted });
    expect(saved.statusCode, saved.body).toBe(200);
    expect(saved.json().data).toEqual(wanted);
    expect((await t.app.inject({ method: 'GET', url: p.url, headers: p.memberHeaders })).json().data).toEqual(
      wanted,
    );

    const byMember = await t.app.inject({
      method: 'PUT',
      url: p.url,
      headers: p.memberHeaders,
      payload: DEFAULTS,
    });
    expect(byMember.statusCode).toBe(403);
    expect(byMember.json().message).toBe('仅项目所有者或管理员可以修改语音配置');
    expect((await t.app.inject({ method: 'GET', url: p.url, headers: p.headers })).json().data).toEqual(
      wanted,
    );
  });

  it('400 naming the field for ids of another project or of the wrong kind, and for out-of-range timeouts; nothing changes', async () => {
    const p = await project();
    const recognition = await p.make('speech-providers', '识别');
    const synthesis = await p.make('synthesis-providers', '合成');
    const foreign = await p.make(
      'speech-providers',
      '别人的识别',
      p.outsiderHeaders,
      `/api/project/${p.outsider.projectId}`,
    );
    const cases: [Record<string, unknown>, string][] = [
      [
        { recognitionPrimaryId: foreign },
        '字段 recognitionPrimaryId：主识别配置不存在或不属于本项目，请选择本项目的语音识别配置',
      ],
      // A synthesis profile cannot listen.
      [
        { recognitionPrimaryId: synthesis },
        '字段 recognitionPrimaryId：主识别配置不存在或不属于本项目，请选择本项目的语音识别配置',
      ],
      [
        { recognitionPrimaryId: recognition, recognitionFallbackId: recognition },
        '字段 recognitionFallbackId：备用识别配置不能与主识别配置相同',
      ],
      [
        { recognitionFallbackId: recognition },
        '字段 recognitionFallbackId：请先选择主识别配置，备用识别配置在主识别失败时接替',
      ],
      [
        { synthesisFallback: { provider: recognition, voiceId: 'alloy' } },
        '字段 synthesisFallback.provider：备用音色所属的语音合成配置不存在或不属于本项目',
      ],
      [
        { synthesisFallback: { provider: 'espeak', voiceId: 'en-us' } },
        '字段 synthesisFallback.voiceId：音色不存在',
      ],
      [{ recognitionTimeoutMs: 100 }, '字段 recognitionTimeoutMs：识别超时不能低于 300 毫秒'],
      [{ synthesisTimeoutMs: 20_000 }, '字段 synthesisTimeoutMs：合成超时不能超过 10000 毫秒'],
    ];
    for (const [payload, message] of cases) {
      const res = await t.app.inject({ method: 'PUT', url: p.url, headers: p.headers, payload });
      expect(res.statusCode, message).toBe(400);
      expect(res.json().message).toBe(message);
    }
    expect(await t.db.select().from(speechSettings).where(eqProject(p.projectId))).toHaveLength(0);
  });

  it('another project’s member can neither read nor change the settings', async () => {
    const p = await project();
    for (const method of ['GET', 'PUT'] as const) {
      const res = await t.app.inject({
        method,
        url: p.url,
        headers: p.outsiderHeaders,
        ...(method === 'PUT' ? { payload: DEFAULTS } : {}),
      });
      expect(res.statusCode, method).toBe(403);
    }
    expect(await t.db.select().from(speechSettings).where(eqProject(p.projectId))).toHaveLength(0);
  });

  it('an assistant without its own recogniser listens with the project’s primary, which cannot be deleted while it is', async () => {
    const p = await project();
    const primary = await p.make('speech-providers', '主识别');
    const created = await t.app.inject({
      method: 'POST',
      url: `${p.base}/assistants`,
      headers: p.headers,
      payload: { name: '默认识别的助手', config: { hearing: { providerId: null } } },
    });
    const ports = t.app.runtime.engine.ports;
    const call = await ports.assistants.forCall(p.projectId, created.json().data.id, 'draft');
    // No primary yet: key presses only.
    expect(await recognizerFor(ports.assistants, p.projectId, call.config)).toBeNull();

    await t.app.inject({
      method: 'PUT',
      url: p.url,
      headers: p.headers,
      payload: { ...DEFAULTS, recognitionPrimaryId: primary },
    });
    const recognizer = await recognizerFor(ports.assistants, p.projectId, call.config);
    const heard = await recognizer?.transcribe(
      { pcm: new Int16Array(8000).fill(1500), sampleRate: 8000 },
      { language: 'zh' },
    );
    expect(heard?.text).toBe('我想办宽带');
    // An assistant's own choice still wins over the project's default.
    const own = await p.make('speech-providers', '自己的');
    const ownConfig = assistantConfig.parse({ hearing: { providerId: own } });
    expect(await recognizerFor(ports.assistants, p.projectId, ownConfig)).not.toBeNull();

    const refused = await t.app.inject({
      method: 'DELETE',
      url: `${p.base}/speech-providers/${primary}`,
      headers: p.headers,
    });
    expect(refused.statusCode).toBe(409);
    expect(refused.json().message).toBe(
      '该语音识别配置是本项目的主识别配置，请先在语音配置中改选其他主识别配置后再删除',
    );
  });
});

const eqProject = (projectId: string) => eq(speechSettings.projectId, projectId);
