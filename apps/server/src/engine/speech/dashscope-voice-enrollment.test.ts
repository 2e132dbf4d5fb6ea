import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { syntheticReading, toInt16 } from '@callpilot/contracts/voice-sample-testing';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ProviderError } from '../brain/openai-client';
import { VirtualClock } from '../clock';
import { createDashScopeVoiceEnrollment, dashScopeHttpBase } from './dashscope-voice-enrollment';
import {
  type DashScopeEnrollmentServer,
  startDashScopeEnrollmentServer,
} from './testing/dashscope-enrollment-server';
import { encodeWav } from './wav';

const API_KEY = 'sk-dashscope-live-0123456789abcdef';
const SAMPLE = encodeWav(
  toInt16(syntheticReading({ seconds: 12, sampleRate: 16000, voices: [{ f0: 210 }] })),
  16000,
);

let vendor: DashScopeEnrollmentServer;
let files: http.Server;
let sampleUrl: string;
let fetched = 0;

beforeAll(async () => {
  vendor = await startDashScopeEnrollmentServer({ apiKey: API_KEY });
  files = http.createServer((req, res) => {
    if (req.url !== '/sample.wav') {
      res.writeHead(404).end();
      return;
    }
    fetched++;
    res.writeHead(200, { 'content-type': 'audio/wav' }).end(SAMPLE);
  });
  await new Promise<void>((resolve) => files.listen(0, '127.0.0.1', resolve));
  sampleUrl = `http://127.0.0.1:${(files.address() as AddressInfo).port}/sample.wav`;
});
afterAll(async () => {
  await vendor.close();
  await new Promise((resolve) => files.close(resolve));
});
afterEach(() => {
  vendor.fault(null);
  vendor.voices.clear();
  vendor.requests.length = 0;
});

const client = (over: Partial<Parameters<typeof createDashScopeVoiceEnrollment>[0]> = {}) =>
  createDashScopeVoiceEnrollment({ apiKey: API_KEY, baseUrl: vendor.baseUrl, ...over });

async function failure(promise: Promise<unknown>): Promise<ProviderError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ProviderError);
  return err as ProviderError;
}

describe('DashScope CosyVoice voice enrolment', () => {
  it('maps the synthesis profile websocket address to the enrolment API', () => {
    expect(dashScopeHttpBase('wss://dashscope.aliyuncs.com/api-ws/v1/inference')).toBe(
      'https://dashscope.aliyuncs.com/api/v1',
    );
    expect(dashScopeHttpBase(vendor.websocketUrl)).toBe(vendor.baseUrl);
  });

  it('enrols a sample the vendor downloads itself, then follows review to OK, lists and deletes it', async () => {
    const enrollment = client();
    const voiceId = await enrollment.createVoice({
      targetModel: 'cosyvoice-v2',
      prefix: 'cp1a2b3c4d',
      url: sampleUrl,
    });
    expect(voiceId).toMatch(/^cosyvoice-v2-cp1a2b3c4d-[0-9a-f]{16}$/);
    expect(fetched).toBeGreaterThan(0);
    expect(vendor.voices.get(voiceId)?.sample.equals(SAMPLE)).toBe(true);
    expect(vendor.requests[0]).toMatchObject({
      action: 'create_voice',
      authorization: `Bearer ${API_KEY}`,
      input: { action: 'create_voice', target_model: 'cosyvoice-v2', prefix: 'cp1a2b3c4d', url: sampleUrl },
    });

    expect(await enrollment.queryVoice(voiceId)).toEqual({
      state: 'training',
      reason: '',
      vendorStatus: 'DEPLOYING',
    });
    vendor.setStatus(voiceId, 'OK');
    expect(await enrollment.queryVoice(voiceId)).toMatchObject({ state: 'ready', vendorStatus: 'OK' });
    expect(await enrollment.listVoices({ prefix: 'cp1a2b3c4d' })).toEqual([{ voiceId, status: 'OK' }]);

    await enrollment.deleteVoice(voiceId);
    expect(vendor.voices.size).toBe(0);
    const gone = await failure(enrollment.queryVoice(voiceId));
    expect(gone.kind).toBe('bad_request');
  });

  it('reports a voice refused in review as failed, with a reason to act on', async () => {
    const enrollment = client();
    const voiceId = await enrollment.createVoice({
      targetModel: 'cosyvoice-v2',
      prefix: 'cpx',
      url: sampleUrl,
    });
    vendor.setStatus(voiceId, 'UNDEPLOYED');
    expect(await enrollment.queryVoice(voiceId)).toEqual({
      state: 'failed',
      reason: '阿里云百炼未通过该音色的审核（UNDEPLOYED），请换一段清晰的单人朗读录音重新复刻',
      vendorStatus: 'UNDEPLOYED',
    });
  });

  it('names the API Key in 语音配置 on a wrong key, and never repeats the key', async () => {
    const err = await failure(
      client({ apiKey: 'sk-wrong-key-0000000000' }).createVoice({
        targetModel: 'cosyvoice-v2',
        prefix: 'cp',
        url: sampleUrl,
      }),
    );
    expect(err.kind).toBe('auth');
    expect(err.service).toBe('speech_synthesis');
    expect(err.message).toBe(
      '阿里云百炼声音复刻服务拒绝了 API Key（InvalidApiKey），请检查语音配置中的 API Key',
    );
    expect(err.message).not.toContain('sk-wrong');
    expect(vendor.voices.size).toBe(0);
  });

  it("passes on the vendor's reason when it cannot fetch the sample, and refuses a bad prefix before asking", async () => {
    const unreachable = await failure(
      client().createVoice({ targetModel: 'cosyvoice-v2', prefix: 'cp', url: `${sampleUrl}.missing` }),
    );
    expect(unreachable.kind).toBe('bad_request');
    expect(unreachable.message).toBe(
      '阿里云百炼声音复刻服务拒绝了请求（InvalidParameter）：Download audio failed, please check the url',
    );
    const prefix = await failure(
      client().createVoice({ targetModel: 'cosyvoice-v2', prefix: 'Bad-Prefix', url: sampleUrl }),
    );
    expect(prefix.message).toBe('声音复刻的音色前缀只能包含小写字母和数字，且不超过 10 个字符');
    expect(vendor.requests.filter((r) => r.input.prefix === 'Bad-Prefix')).toHaveLength(0);
  });

  it('maps throttling, vendor outages and a connection cut mid-answer', async () => {
    const throttled = await startDashScopeEnrollmentServer({
      apiKey: API_KEY,
      rate: { windowMs: 60_000, maxRequests: 1 },
    });
    try {
      const enrollment = client({ baseUrl: throttled.baseUrl });
      await enrollment.listVoices();
      const err = await failure(enrollment.listVoices());
      expect(err.kind).toBe('rate_limit');
      expect(err.message).toBe(
        '阿里云百炼声音复刻服务请求过于频繁或额度不足（Throttling.RateQuota），请稍后再试',
      );
    } finally {
      await throttled.close();
    }

    vendor.fault({ action: 'query_voice', status: 500, code: 'InternalError', message: 'boom' });
    const outage = await failure(client().queryVoice('cosyvoice-v2-cp-0'));
    expect(outage.kind).toBe('upstream');
    expect(outage.message).toBe('阿里云百炼声音复刻服务暂时不可用（InternalError），请稍后再试');

    vendor.fault({ action: 'create_voice', drop: true });
    const cut = await failure(
      client().createVoice({ targetModel: 'cosyvoice-v2', prefix: 'cp', url: sampleUrl }),
    );
    expect(cut.kind).toBe('network');
    expect(cut.message).toContain('无法连接阿里云百炼声音复刻服务，或连接中途断开');
  });

  it('times out on the engine clock when the vendor does not answer', async () => {
    const slow = await startDashScopeEnrollmentServer({ apiKey: API_KEY, delayMs: 5_000 });
    const clock = new VirtualClock();
    try {
      const pending = failure(client({ baseUrl: slow.baseUrl, clock, timeoutMs: 3_000 }).listVoices());
      await new Promise((resolve) => setTimeout(resolve, 50));
      await clock.advance(3_000);
      const err = await pending;
      expect(err.kind).toBe('timeout');
      expect(err.message).toBe('声音复刻服务响应超时（超过 3 秒），请稍后再试');
    } finally {
      await slow.close();
    }
  });
});
