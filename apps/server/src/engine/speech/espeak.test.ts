import { afterAll, describe, expect, it } from 'vitest';
import { createEspeakSynthesizer } from './espeak';
import { readWav, rms16 } from './wav';

const synthesizer = createEspeakSynthesizer();
afterAll(() => synthesizer.close());

const voice = { voiceId: 'cmn+f3', speed: 1, volume: 80 };

describe('offline espeak-ng synthesis', () => {
  it('speaks Mandarin as a WAV of plausible length that is not silent', async () => {
    const text = '您好，这里是星河宽带客服中心，请问有什么可以帮您？';
    const speech = await synthesizer.synthesize(text, voice);
    expect(speech.mimeType).toBe('audio/wav');
    expect(speech.audio.toString('ascii', 0, 4)).toBe('RIFF');
    expect(speech.audio.toString('ascii', 8, 12)).toBe('WAVE');
    const info = readWav(speech.audio);
    expect(info).toMatchObject({ channels: 1, bitsPerSample: 16 });
    expect(info.sampleRate).toBeGreaterThanOrEqual(16000);
    // 24 syllables at a normal pace: between 2 and 12 seconds.
    expect(speech.durationMs).toBeGreaterThan(2000);
    expect(speech.durationMs).toBeLessThan(12000);
    expect(rms16(speech.audio, info)).toBeGreaterThan(300);
  });

  it('sounds different per voice, slower at a lower speed, and quieter at a lower volume', async () => {
    const text = '请问您明天上午方便安装宽带吗？';
    const female = await synthesizer.synthesize(text, voice);
    const male = await synthesizer.synthesize(text, { ...voice, voiceId: 'cmn+m3' });
    expect(male.audio.equals(female.audio)).toBe(false);
    const slow = await synthesizer.synthesize(text, { ...voice, speed: 0.5 });
    expect(slow.durationMs).toBeGreaterThan(female.durationMs * 1.4);
    const quiet = await synthesizer.synthesize(text, { ...voice, volume: 20 });
    expect(rms16(quiet.audio, readWav(quiet.audio))).toBeLessThan(
      rms16(female.audio, readWav(female.audio)) / 2,
    );
  });

  it('handles concurrent requests one at a time and refuses unknown voices and overlong text', async () => {
    const texts = ['第一句。', '第二句话稍微长一点。', '第三句。'];
    const results = await Promise.all(texts.map((text) => synthesizer.synthesize(text, voice)));
    expect(results[1]!.durationMs).toBeGreaterThan(results[0]!.durationMs);
    await expect(synthesizer.synthesize('你好', { ...voice, voiceId: 'en-us' })).rejects.toThrow(
      '字段 voice.voiceId：音色不存在',
    );
    await expect(synthesizer.synthesize('好'.repeat(501), voice)).rejects.toThrow('不能超过 500 个字符');
    for (const option of synthesizer.voices()) {
      const speech = await synthesizer.synthesize('您好', { ...voice, voiceId: option.voiceId });
      expect(speech.durationMs, option.voiceId).toBeGreaterThan(200);
    }
    await expect(synthesizer.synthesize('-v en --help', voice)).resolves.toMatchObject({
      mimeType: 'audio/wav',
    });
  });
});
