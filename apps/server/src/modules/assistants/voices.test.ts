import { afterEach, describe, expect, it } from 'vitest';
import { createTestApp, loginAs, seedUser } from '../../../test/helpers';
import { readWav, rms16 } from '../../engine/speech/wav';

type TestApp = Awaited<ReturnType<typeof createTestApp>>;
let current: TestApp | undefined;
afterEach(async () => {
  await current?.app.close();
  current = undefined;
});

async function setup() {
  current = await createTestApp();
  const { app, db } = current;
  const a = await seedUser(db, { email: 'owner-a@example.com' });
  await seedUser(db, { email: 'owner-b@example.com' });
  return {
    app,
    base: `/api/project/${a.projectId}`,
    headers: await loginAs(app, 'owner-a@example.com'),
    headersB: await loginAs(app, 'owner-b@example.com'),
  };
}

describe('voices and TTS preview', () => {
  it('lists Mandarin female and male voices and plays a preview as WAV audio', async () => {
    const { app, base, headers } = await setup();
    const voices = (await app.inject({ method: 'GET', url: `${base}/voices`, headers })).json().data;
    expect(voices).toEqual(
      expect.arrayContaining([
        { provider: 'espeak', voiceId: 'cmn+f3', name: '普通话女声', language: 'zh-CN' },
        { provider: 'espeak', voiceId: 'cmn+m3', name: '普通话男声', language: 'zh-CN' },
      ]),
    );
    const res = await app.inject({
      method: 'POST',
      url: `${base}/tts/preview`,
      headers: { ...headers, 'accept-encoding': 'gzip' },
      payload: { text: '您好，我是您的专属客服。', voice: { voiceId: 'cmn+m3', speed: 1.2, volume: 90 } },
    });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('audio/wav');
    const audio = res.rawPayload;
    const info = readWav(audio);
    expect(info.durationMs).toBeGreaterThan(800);
    expect(Number(res.headers['x-audio-duration-ms'])).toBe(info.durationMs);
    expect(rms16(audio, info)).toBeGreaterThan(300);
  });

  it('refuses empty or overlong text and unknown voices with a message naming the field', async () => {
    const { app, base, headers } = await setup();
    const cases: Array<[object, string]> = [
      [{ text: '  ' }, '字段 text：请输入合成文本'],
      [{ text: '好'.repeat(501) }, '字段 text：合成文本不能超过 500 个字符'],
      [{ text: '你好', voice: { voiceId: 'en-us' } }, '字段 voice.voiceId：音色不存在'],
      [{ text: '你好', voice: { speed: 5 } }, '字段 voice.speed：语速不能超过 2'],
    ];
    for (const [payload, message] of cases) {
      const res = await app.inject({ method: 'POST', url: `${base}/tts/preview`, headers, payload });
      expect(res.statusCode, JSON.stringify(payload)).toBe(400);
      expect(res.json().message).toBe(message);
    }
  });

  it("does not serve another project's voices or previews", async () => {
    const { app, base, headersB } = await setup();
    expect((await app.inject({ method: 'GET', url: `${base}/voices`, headers: headersB })).statusCode).toBe(
      403,
    );
    const preview = await app.inject({
      method: 'POST',
      url: `${base}/tts/preview`,
      headers: headersB,
      payload: { text: '你好' },
    });
    expect(preview.statusCode).toBe(403);
  });
});
