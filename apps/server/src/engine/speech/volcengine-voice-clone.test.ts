import { syntheticReading, toInt16 } from '@callpilot/contracts/voice-sample-testing';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ProviderError } from '../brain/openai-client';
import { startVolcengineSpeechServer, type VolcengineSpeechServer } from './testing/volcengine-speech-server';
import { createVolcengineVoiceClone } from './volcengine-voice-clone';
import { encodeWav } from './wav';

const APP_ID = '7300001234';
const TOKEN = 'volc-access-token-abcdefghij0123';
const SAMPLE = encodeWav(
  toInt16(syntheticReading({ seconds: 12, sampleRate: 16000, voices: [{ f0: 120 }] })),
  16000,
);

let vendor: VolcengineSpeechServer;
beforeAll(async () => {
  vendor = await startVolcengineSpeechServer({
    appId: APP_ID,
    token: TOKEN,
    slots: ['S_abc123', 'S_used'],
    maxUploadsPerSlot: 2,
  });
});
afterAll(() => vendor.close());
afterEach(() => {
  vendor.fault(null);
  vendor.requests.length = 0;
});

const clone = (over: Partial<Parameters<typeof createVolcengineVoiceClone>[0]> = {}) =>
  createVolcengineVoiceClone({ appId: APP_ID, token: TOKEN, baseUrl: vendor.baseUrl, ...over });

async function failure(promise: Promise<unknown>): Promise<ProviderError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ProviderError);
  return err as ProviderError;
}

describe('Volcengine 声音复刻', () => {
  it('uploads the sample into the bought slot with the documented headers and body, then follows training', async () => {
    await clone().upload({ speakerId: 'S_abc123', audio: SAMPLE, format: 'wav' });
    const [upload] = vendor.requests;
    expect(upload?.path).toBe('/api/v1/mega_tts/audio/upload');
    expect(upload?.headers.authorization).toBe(`Bearer;${TOKEN}`);
    expect(upload?.headers['resource-id']).toBe('volc.megatts.voiceclone');
    expect(upload?.body).toMatchObject({
      appid: APP_ID,
      speaker_id: 'S_abc123',
      source: 2,
      language: 0,
      model_type: 1,
    });
    // The token travels in the header only.
    expect(JSON.stringify(upload?.body)).not.toContain(TOKEN);
    expect(vendor.slots.get('S_abc123')?.sample?.equals(SAMPLE)).toBe(true);

    expect(await clone().status('S_abc123')).toEqual({ state: 'training', reason: '', vendorStatus: '1' });
    vendor.finishTraining('S_abc123', true);
    expect(await clone().status('S_abc123')).toMatchObject({ state: 'ready', vendorStatus: '2' });
    vendor.finishTraining('S_abc123', false);
    expect(await clone().status('S_abc123')).toEqual({
      state: 'failed',
      reason: '火山引擎训练该音色失败，请换一段清晰的单人朗读录音重新复刻',
      vendorStatus: '3',
    });
  });

  it('refuses a wrong token naming 语音配置, never echoing it', async () => {
    const err = await failure(
      clone({ token: 'wrong-token-000000' }).upload({ speakerId: 'S_abc123', audio: SAMPLE, format: 'wav' }),
    );
    expect(err.kind).toBe('auth');
    expect(err.message).toBe(
      '火山引擎声音复刻服务拒绝了 Access Token（HTTP 401），请检查语音配置中的 APP ID 与 Access Token，并确认已开通声音复刻',
    );
    expect(err.message).not.toContain('wrong-token');
  });

  it("explains the service's refusals: a slot not bought, no uploads left, an unreadable sample", async () => {
    const unknown = await failure(clone().upload({ speakerId: 'S_nobody', audio: SAMPLE, format: 'wav' }));
    expect(unknown.message).toBe(
      '火山引擎声音复刻服务：火山引擎控制台中没有这个音色 ID，请核对音色 ID（S_ 开头）（1107）',
    );

    await clone().upload({ speakerId: 'S_used', audio: SAMPLE, format: 'wav' });
    await clone().upload({ speakerId: 'S_used', audio: SAMPLE, format: 'wav' });
    const spent = await failure(clone().upload({ speakerId: 'S_used', audio: SAMPLE, format: 'wav' }));
    expect(spent.message).toBe(
      '火山引擎声音复刻服务：该音色 ID 的训练次数已用完，请在火山引擎控制台购买新的音色 ID（1123）',
    );

    const garbled = await failure(
      clone().upload({ speakerId: 'S_abc123', audio: Buffer.from('not audio'), format: 'wav' }),
    );
    expect(garbled.message).toBe('火山引擎声音复刻服务：无法读取音频数据，请确认文件是完整的 WAV（1105）');
  });

  it('maps an outage and a connection cut mid-answer', async () => {
    vendor.fault({ path: '/api/v1/mega_tts/status', status: 503 });
    const outage = await failure(clone().status('S_abc123'));
    expect(outage.kind).toBe('upstream');
    expect(outage.message).toBe('火山引擎声音复刻服务暂时不可用（HTTP 503），请稍后再试');

    vendor.fault({ path: '/api/v1/mega_tts/audio/upload', drop: true });
    const cut = await failure(clone().upload({ speakerId: 'S_abc123', audio: SAMPLE, format: 'wav' }));
    expect(cut.kind).toBe('network');
  });
});
