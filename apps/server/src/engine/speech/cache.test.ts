import { describe, expect, it } from 'vitest';
import { cachedSynthesizer } from './cache';
import type { SpeechSynthesizer } from './types';

function counting(size = 100) {
  const calls: string[] = [];
  const inner: SpeechSynthesizer = {
    voices: () => [],
    async synthesize(text) {
      calls.push(text);
      if (text === 'bad') throw new Error('boom');
      return { audio: Buffer.alloc(size), mimeType: 'audio/wav', durationMs: 10 };
    },
    close: async () => {},
  };
  return { inner, calls };
}

const voice = { voiceId: 'cmn', speed: 1, volume: 80 };

describe('cached synthesizer', () => {
  it('synthesises a repeated line once per voice, evicts the least recent beyond its size, and retries failures', async () => {
    const { inner, calls } = counting(100);
    const cached = cachedSynthesizer(inner, 250);
    await cached.synthesize('您好', voice);
    await cached.synthesize('您好', voice);
    await cached.synthesize('您好', { ...voice, voiceId: 'cmn+f3' });
    expect(calls).toEqual(['您好', '您好']);
    await cached.synthesize('再见', voice); // 300 bytes > 250: the oldest (cmn 您好) goes
    await cached.synthesize('您好', { ...voice, voiceId: 'cmn+f3' });
    await cached.synthesize('您好', voice);
    expect(calls).toEqual(['您好', '您好', '再见', '您好']);
    await expect(cached.synthesize('bad', voice)).rejects.toThrow('boom');
    await expect(cached.synthesize('bad', voice)).rejects.toThrow('boom');
    expect(calls.filter((c) => c === 'bad')).toHaveLength(2);
  });
});
