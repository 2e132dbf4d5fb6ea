import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { assistantConfig } from '@callpilot/contracts';
import { syntheticReading, toInt16 } from '@callpilot/contracts/voice-sample-testing';
import { eq, sql } from 'drizzle-orm';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, loginAs, seedUser, testEnv } from '../../../test/helpers';
import { assistants, memberships, projectLimits, synthesisProviders, voiceClones } from '../../db/schema';
import {
  type DashScopeEnrollmentServer,
  startDashScopeEnrollmentServer,
} from '../../engine/speech/testing/dashscope-enrollment-server';
import {
  startVolcengineSpeechServer,
  type VolcengineSpeechServer,
} from '../../engine/speech/testing/volcengine-speech-server';
import { encodeWav } from '../../engine/speech/wav';
import { encryptSecret, loadAppSecret } from '../../lib/secret-box';
import { listReadyCloneOptions, resolveClonedVoice } from './voice-clones.service';

const APP_SECRET = 'voice-clone-app-secret-0123456789abcdef';
const DASHSCOPE_KEY = 'sk-dashscope-clone-0123456789abcdef';
const VOLC_APP_ID = '7300001234';
const VOLC_TOKEN = 'volc-access-token-abcdefghij0123';

const wav = (over: Partial<Parameters<typeof syntheticReading>[0]> = {}) => {
  const options = { seconds: 12, sampleRate: 16000, voices: [{ f0: 200 }], ...over };
  return encodeWav(toInt16(syntheticReading(options)), options.sampleRate);
};
const GOOD = wav();

let dashscope: DashScopeEnrollmentServer;
let volc: VolcengineSpeechServer;
let dataDir: string;
let logs: string[] = [];
type TestApp = Awaited<ReturnType<typeof createTestApp>>;
/** One app for the file (each test seeds its own projects in it); `bare` has no PUBLIC_BASE_URL. */
let shared: TestApp;
let bare: TestApp | undefined;
let worlds = 0;

/** A port nothing listens on yet: the app is told it is its public address, then listens there. */
async function freePort(): Promise<number> {
  const probe = net.createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as net.AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

const appWith = (env: Record<string, string>) =>
  createTestApp({
    env: { APP_SECRET, DATA_DIR: dataDir, ...env },
    logger: { level: 'trace', stream: { write: (line: string) => logs.push(line) } },
  });

beforeAll(async () => {
  dashscope = await startDashScopeEnrollmentServer({ apiKey: DASHSCOPE_KEY });
  volc = await startVolcengineSpeechServer({
    appId: VOLC_APP_ID,
    token: VOLC_TOKEN,
    slots: ['S_slot1', 'S_slot2'],
  });
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'voice-clones-'));
  const port = await freePort();
  shared = await appWith({ PUBLIC_BASE_URL: `http://127.0.0.1:${port}` });
  // DashScope downloads the sample from the app itself, over HTTP, as it would in production.
  await shared.app.listen({ port, host: '127.0.0.1' });
});
afterAll(async () => {
  await shared.app.close();
  await bare?.app.close();
  await dashscope.close();
  await volc.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
});
afterEach(() => {
  logs = [];
  dashscope.voices.clear();
  dashscope.requests.length = 0;
  volc.requests.length = 0;
});

async function setup(
  options: { publicBase?: boolean; limits?: Partial<typeof projectLimits.$inferInsert> } = {},
) {
  if (options.publicBase === false) bare ??= await appWith({});
  const current = options.publicBase === false ? (bare as TestApp) : shared;
  const { db, app } = current;
  const n = ++worlds;
  const owner = await seedUser(db, { email: `owner${n}@example.com` });
  const outsider = await seedUser(db, { email: `outsider${n}@example.com` });
  const member = await seedUser(db, { email: `member${n}@example.com`, project: null });
  await db.insert(memberships).values({ projectId: owner.projectId, userId: member.userId, role: 'member' });
  if (options.limits) {
    await db.update(projectLimits).set(options.limits).where(eq(projectLimits.projectId, owner.projectId));
  }
  const secret = loadAppSecret(testEnv({ APP_SECRET }));
  const profile = async (projectId: string, values: Partial<typeof synthesisProviders.$inferInsert>) => {
    const id = randomUUID();
    await db.insert(synthesisProviders).values({
      id,
      projectId,
      name: `配置${id.slice(0, 4)}`,
      vendor: 'cosyvoice',
      baseUrl: '',
      model: '',
      ...values,
    });
    return id;
  };
  const cosy = await profile(owner.projectId, {
    vendor: 'cosyvoice',
    baseUrl: dashscope.websocketUrl,
    model: 'cosyvoice-v2',
    apiKeyEncrypted: encryptSecret(secret, DASHSCOPE_KEY),
    apiKeyHint: 'cdef',
  });
  const volcano = await profile(owner.projectId, {
    vendor: 'volcengine',
    baseUrl: volc.baseUrl,
    model: 'volcano_icl',
    appId: VOLC_APP_ID,
    apiKeyEncrypted: encryptSecret(secret, VOLC_TOKEN),
  });
  const openai = await profile(owner.projectId, {
    vendor: 'openai_compatible',
    baseUrl: 'http://127.0.0.1:9/v1',
    model: 'tts-1',
  });
  const foreignCosy = await profile(outsider.projectId, {
    vendor: 'cosyvoice',
    baseUrl: dashscope.websocketUrl,
    apiKeyEncrypted: encryptSecret(secret, DASHSCOPE_KEY),
  });
  const [headers, memberHeaders, outsiderHeaders] = await Promise.all([
    loginAs(app, `owner${n}@example.com`),
    loginAs(app, `member${n}@example.com`),
    loginAs(app, `outsider${n}@example.com`),
  ]);
  return {
    ...current,
    headers,
    memberHeaders,
    outsiderHeaders,
    projectId: owner.projectId,
    outsiderProjectId: outsider.projectId,
    owner,
    url: `/api/project/${owner.projectId}/voice-clones`,
    profiles: { cosy, volcano, openai, foreignCosy },
    /** This project's clones. */
    clones: () => db.select().from(voiceClones).where(eq(voiceClones.projectId, owner.projectId)),
  };
}
type Setup = Awaited<ReturnType<typeof setup>>;

/** A multipart body as a browser's FormData would send it. */
function form(fields: Record<string, string>, sample?: Buffer) {
  const boundary = `----voiceclone${randomUUID()}`;
  const parts: Buffer[] = [];
  for (const [name, value] of Object.entries(fields)) {
    parts.push(
      Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`),
    );
  }
  if (sample) {
    parts.push(
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="sample"; filename="sample.wav"\r\nContent-Type: audio/wav\r\n\r\n`,
      ),
      sample,
      Buffer.from('\r\n'),
    );
  }
  parts.push(Buffer.from(`--${boundary}--\r\n`));
  return {
    payload: Buffer.concat(parts),
    headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
  };
}

const create = (
  t: Setup,
  fields: Record<string, string>,
  sample: Buffer | null = GOOD,
  headers = t.headers,
) => {
  const body = form(fields, sample ?? undefined);
  return t.app.inject({
    method: 'POST',
    url: t.url,
    headers: { ...headers, ...body.headers },
    payload: body.payload,
  });
};

/** Lets the 5 s status throttle pass, as if the console polled again later. */
const ageChecks = (t: Setup) =>
  t.db
    .update(voiceClones)
    .set({ checkedAt: sql`now() - interval '10 seconds'` })
    .where(eq(voiceClones.projectId, t.projectId));

describe('voice cloning through DashScope CosyVoice', () => {
  it('enrols a checked sample the vendor downloads from the signed public URL, follows review to ready, and deletes it there too', async () => {
    const t = await setup();
    const res = await create(t, { name: '客服小李', providerId: t.profiles.cosy });
    expect(res.statusCode, res.body).toBe(200);
    const clone = res.json().data;
    expect(clone).toMatchObject({
      name: '客服小李',
      providerId: t.profiles.cosy,
      vendor: 'cosyvoice',
      status: 'training',
      failureReason: '',
      sampleDurationMs: 12000,
    });
    expect(clone).not.toHaveProperty('vendorVoiceId');

    // DashScope got exactly the uploaded WAV, from our public address, for the profile's model.
    const [enrolled] = [...dashscope.voices.values()];
    expect(enrolled?.sample.equals(GOOD)).toBe(true);
    expect(enrolled?.targetModel).toBe('cosyvoice-v2');
    expect(enrolled?.url).toMatch(
      new RegExp(`^http://127\\.0\\.0\\.1:\\d+/api/public/voice-samples/${clone.id}\\.`),
    );
    const vendorVoiceId = enrolled?.voiceId as string;

    const one = () => t.app.inject({ method: 'GET', url: `${t.url}/${clone.id}`, headers: t.headers });
    // Polled again at once: the vendor is not asked again within 5 s.
    expect((await one()).json().data.status).toBe('training');
    expect(dashscope.requests.filter((r) => r.action === 'query_voice')).toHaveLength(0);
    await ageChecks(t);
    expect((await one()).json().data.status).toBe('training');
    expect(dashscope.requests.filter((r) => r.action === 'query_voice')).toHaveLength(1);

    dashscope.setStatus(vendorVoiceId, 'OK');
    await ageChecks(t);
    const list = await t.app.inject({ method: 'GET', url: t.url, headers: t.headers });
    expect(list.json().data).toMatchObject({ total: 1, items: [{ id: clone.id, status: 'ready' }] });
    // Ready: the public URL has nothing left to serve.
    const download = await fetch(enrolled?.url as string);
    expect(download.status).toBe(404);

    // The call path resolves it within its project only; the picker offers it.
    expect(await resolveClonedVoice(t.db, t.projectId, `clone:${clone.id}`)).toEqual({
      profileId: t.profiles.cosy,
      vendorVoiceId,
      vendor: 'cosyvoice',
    });
    expect(await resolveClonedVoice(t.db, t.outsiderProjectId, `clone:${clone.id}`)).toBeNull();
    expect(await listReadyCloneOptions(t.db, t.projectId)).toEqual([
      {
        provider: t.profiles.cosy,
        voiceId: `clone:${clone.id}`,
        name: '客服小李（复刻）',
        language: 'zh-CN',
      },
    ]);

    const removed = await t.app.inject({ method: 'DELETE', url: `${t.url}/${clone.id}`, headers: t.headers });
    expect(removed.statusCode, removed.body).toBe(200);
    expect(dashscope.voices.size).toBe(0);
    expect((await one()).statusCode).toBe(404);

    for (const body of [res.body, list.body, logs.join('\n')]) {
      expect(body).not.toContain(vendorVoiceId);
      expect(body).not.toContain(DASHSCOPE_KEY);
    }
  });

  it('shows a clone the vendor refused as failed, with the reason', async () => {
    const t = await setup();
    const id = (await create(t, { name: '小王', providerId: t.profiles.cosy })).json().data.id;
    dashscope.setStatus([...dashscope.voices.keys()][0] as string, 'UNDEPLOYED');
    await ageChecks(t);
    const res = await t.app.inject({ method: 'GET', url: `${t.url}/${id}`, headers: t.headers });
    expect(res.json().data).toMatchObject({
      status: 'failed',
      failureReason: '阿里云百炼未通过该音色的审核（UNDEPLOYED），请换一段清晰的单人朗读录音重新复刻',
    });
    expect(await resolveClonedVoice(t.db, t.projectId, `clone:${id}`)).toBeNull();
  });

  it("answers the vendor's refusal in Chinese and keeps nothing; the signed URL refuses tampering", async () => {
    const t = await setup();
    await t.db
      .update(synthesisProviders)
      .set({ apiKeyEncrypted: encryptSecret(loadAppSecret(testEnv({ APP_SECRET })), 'sk-wrong-key-000000') })
      .where(eq(synthesisProviders.id, t.profiles.cosy));
    const res = await create(t, { name: '小王', providerId: t.profiles.cosy });
    expect(res.statusCode).toBe(502);
    expect(res.json().message).toBe(
      '阿里云百炼声音复刻服务拒绝了 API Key（InvalidApiKey），请检查语音配置中的 API Key',
    );
    expect(res.body).not.toContain('sk-wrong');
    expect(await t.clones()).toEqual([]);
    expect(fs.readdirSync(path.join(dataDir, 'voice-samples', t.projectId))).toEqual([]);

    const forged = await t.app.inject({
      method: 'GET',
      url: `/api/public/voice-samples/${randomUUID()}.9999999999999.${'A'.repeat(43)}.wav`,
    });
    expect(forged.statusCode).toBe(404);
    expect(forged.json().message).toBe('录音地址无效或已过期');
  });

  it('refuses CosyVoice cloning with a clear message while PUBLIC_BASE_URL is unset; Volcengine needs none', async () => {
    const t = await setup({ publicBase: false });
    const res = await create(t, { name: '小王', providerId: t.profiles.cosy });
    expect(res.statusCode).toBe(409);
    expect(res.json().message).toBe(
      '服务器未配置公网地址（PUBLIC_BASE_URL），阿里云百炼无法下载录音，暂不能用 CosyVoice 复刻声音：请联系管理员配置',
    );
    expect(dashscope.requests).toHaveLength(0);
    const volcano = await create(t, { name: '小王', providerId: t.profiles.volcano, speakerId: 'S_slot2' });
    expect(volcano.statusCode, volcano.body).toBe(200);
  });
});

describe('voice cloning through Volcengine', () => {
  it('needs the bought speaker id, uploads into that slot, trains to ready, and frees our slot on delete', async () => {
    const t = await setup();
    const without = await create(t, { name: '小张', providerId: t.profiles.volcano });
    expect(without.statusCode).toBe(400);
    expect(without.json().message).toBe('字段 speakerId：请填写火山引擎控制台中购买的音色 ID（S_ 开头）');
    const badShape = await create(t, { name: '小张', providerId: t.profiles.volcano, speakerId: 'abc' });
    expect(badShape.json().message).toBe('字段 speakerId：音色 ID 须为火山引擎控制台中的 S_ 开头的音色 ID');

    const res = await create(t, { name: '小张', providerId: t.profiles.volcano, speakerId: 'S_slot1' });
    expect(res.statusCode, res.body).toBe(200);
    const clone = res.json().data;
    expect(clone).toMatchObject({ vendor: 'volcengine', status: 'training' });
    expect(volc.slots.get('S_slot1')?.sample?.equals(GOOD)).toBe(true);
    expect(res.body).not.toContain('S_slot1');

    const again = await create(t, { name: '小张二号', providerId: t.profiles.volcano, speakerId: 'S_slot1' });
    expect(again.statusCode).toBe(400);
    expect(again.json().message).toBe(
      '字段 speakerId：该音色 ID 已被复刻音色「小张」使用，请先删除它或换一个音色 ID',
    );

    volc.finishTraining('S_slot1', true);
    await ageChecks(t);
    const ready = await t.app.inject({ method: 'GET', url: `${t.url}/${clone.id}`, headers: t.headers });
    expect(ready.json().data.status).toBe('ready');
    expect(await resolveClonedVoice(t.db, t.projectId, `clone:${clone.id}`)).toEqual({
      profileId: t.profiles.volcano,
      vendorVoiceId: 'S_slot1',
      vendor: 'volcengine',
    });

    expect(
      (await t.app.inject({ method: 'DELETE', url: `${t.url}/${clone.id}`, headers: t.headers })).statusCode,
    ).toBe(200);
    expect(await t.clones()).toEqual([]);
  });

  it('marks a failed training as failed', async () => {
    const t = await setup();
    volc.slots.set('S_slot2', { speakerId: 'S_slot2', status: 0, uploads: 0 });
    const id = (
      await create(t, { name: '小赵', providerId: t.profiles.volcano, speakerId: 'S_slot2' })
    ).json().data.id;
    volc.finishTraining('S_slot2', false);
    await ageChecks(t);
    const res = await t.app.inject({ method: 'GET', url: t.url, headers: t.headers });
    expect(res.json().data.items[0]).toMatchObject({
      id,
      status: 'failed',
      failureReason: '火山引擎训练该音色失败，请换一段清晰的单人朗读录音重新复刻',
    });
  });
});

describe('what a sample and a request must be', () => {
  it('refuses each sample problem in Chinese, naming the field, before any vendor is asked', async () => {
    const t = await setup();
    const cases: [Buffer | null, string][] = [
      [wav({ seconds: 6 }), '字段 sample：录音时长 6 秒，不足 10 秒：请连续朗读 10～20 秒'],
      [
        wav({ sampleRate: 8000 }),
        '字段 sample：采样率为 8000 Hz，低于 16000 Hz：请用 16 kHz 或更高的采样率录制（电话录音不能用于复刻）',
      ],
      [
        wav({ voices: [{ f0: 120 }, { f0: 210 }] }),
        '字段 sample：录音中似乎有不止一个人的声音：请只保留一个人朗读的部分，避免他人插话或背景人声',
      ],
      [Buffer.from('ID3 not a wav at all'), '字段 sample：不是有效的 WAV 文件，请上传 WAV 格式的录音'],
      [null, '字段 sample：请上传 10～20 秒的录音（WAV）'],
    ];
    for (const [sample, message] of cases) {
      const res = await create(t, { name: '小王', providerId: t.profiles.cosy }, sample);
      expect(res.statusCode, message).toBe(400);
      expect(res.json().message).toBe(message);
    }
    const fields: [Record<string, string>, string][] = [
      [{ providerId: t.profiles.cosy }, '字段 name：请输入音色名称'],
      [
        { name: '小王', providerId: t.profiles.openai },
        '字段 providerId：该语音合成配置不支持声音复刻，请选择阿里云百炼 CosyVoice 或火山引擎的配置',
      ],
      [{ name: '小王', providerId: randomUUID() }, '字段 providerId：语音合成配置不存在，请刷新后重新选择'],
      // Another project's profile is not this project's.
      [
        { name: '小王', providerId: t.profiles.foreignCosy },
        '字段 providerId：语音合成配置不存在，请刷新后重新选择',
      ],
    ];
    for (const [body, message] of fields) {
      const res = await create(t, body);
      expect(res.statusCode, message).toBe(400);
      expect(res.json().message).toBe(message);
    }
    const json = await t.app.inject({
      method: 'POST',
      url: t.url,
      headers: t.headers,
      payload: { name: 'x' },
    });
    expect(json.statusCode).toBe(400);
    expect(await t.clones()).toEqual([]);
    expect(dashscope.requests).toHaveLength(0);
  });
});

describe('the 声音克隆 limit', () => {
  it('is closed at 0, caps at the limit, and a deletion frees a slot', async () => {
    const closed = await setup({ limits: { hasBalance: true, ttsCloneLimit: 0 } });
    const refused = await create(closed, { name: '小王', providerId: closed.profiles.cosy });
    expect(refused.statusCode).toBe(403);
    expect(refused.json().message).toBe('声音克隆功能未开通，请联系销售开通');
    expect(dashscope.requests).toHaveLength(0);

    const t = await setup({ limits: { hasBalance: true, ttsCloneLimit: 1 } });
    const first = await create(t, { name: '小王', providerId: t.profiles.cosy });
    expect(first.statusCode, first.body).toBe(200);
    const second = await create(t, { name: '小李', providerId: t.profiles.cosy });
    expect(second.statusCode).toBe(403);
    expect(second.json().message).toBe('声音克隆数量已达上限（1 个），请联系销售提升额度');
    await t.app.inject({ method: 'DELETE', url: `${t.url}/${first.json().data.id}`, headers: t.headers });
    expect((await create(t, { name: '小李', providerId: t.profiles.cosy })).statusCode).toBe(200);
  });
});

describe('who may see and change cloned voices', () => {
  it('lets members read only, and shows another project nothing', async () => {
    const t = await setup();
    const id = (await create(t, { name: '小王', providerId: t.profiles.cosy })).json().data.id;
    const as = (headers: Record<string, string>, method: 'GET' | 'DELETE', url: string) =>
      t.app.inject({ method, url, headers });

    expect((await as(t.memberHeaders, 'GET', t.url)).json().data.items).toHaveLength(1);
    const memberCreate = await create(
      t,
      { name: '小李', providerId: t.profiles.cosy },
      GOOD,
      t.memberHeaders,
    );
    expect(memberCreate.statusCode).toBe(403);
    expect(memberCreate.json().message).toBe('仅项目所有者或管理员可以复刻或删除声音');
    expect((await as(t.memberHeaders, 'DELETE', `${t.url}/${id}`)).statusCode).toBe(403);

    for (const [method, url] of [
      ['GET', t.url],
      ['GET', `${t.url}/${id}`],
      ['DELETE', `${t.url}/${id}`],
    ] as const) {
      const res = await as(t.outsiderHeaders, method, url);
      expect(res.statusCode, `${method} ${url}`).toBe(403);
      expect(res.body).not.toContain('小王');
    }
    expect(
      (await create(t, { name: '小李', providerId: t.profiles.cosy }, GOOD, t.outsiderHeaders)).statusCode,
    ).toBe(403);
    // The outsider's own project does not know this clone.
    const foreign = `/api/project/${t.outsiderProjectId}/voice-clones`;
    expect((await as(t.outsiderHeaders, 'GET', `${foreign}/${id}`)).statusCode).toBe(404);
    expect((await as(t.outsiderHeaders, 'DELETE', `${foreign}/${id}`)).statusCode).toBe(404);
    expect((await as(t.outsiderHeaders, 'GET', foreign)).json().data.items).toEqual([]);
    expect((await t.clones()).map((row) => row.id)).toEqual([id]);
  });

  it('refuses to delete a clone an assistant speaks with, naming it', async () => {
    const t = await setup();
    const id = (await create(t, { name: '小王', providerId: t.profiles.cosy })).json().data.id;
    const config = assistantConfig.parse({});
    await t.db.insert(assistants).values({
      id: randomUUID(),
      projectId: t.projectId,
      name: '回访小助手',
      use: 'outbound',
      config: { ...config, voice: { ...config.voice, voiceId: `clone:${id}` } },
      createdBy: t.owner.userId,
    });
    const res = await t.app.inject({ method: 'DELETE', url: `${t.url}/${id}`, headers: t.headers });
    expect(res.statusCode).toBe(409);
    expect(res.json().message).toBe('该复刻音色正被小助手「回访小助手」使用，请先改用其他音色后再删除');
    expect(dashscope.voices.size).toBe(1);
  });
});
