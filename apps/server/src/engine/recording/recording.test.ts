import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { CallTurn } from '@callpilot/contracts';
import { afterAll, describe, expect, it } from 'vitest';
import { createEspeakSynthesizer } from '../speech/espeak';
import type { SpeechSynthesizer } from '../speech/types';
import { readWav, type WavInfo } from '../speech/wav';
import { mixRecording, TURN_GAP_MS } from './mix';
import { LocalRecordingStore } from './store';

const espeak = createEspeakSynthesizer();
afterAll(() => espeak.close());

/** The real synthesiser, noting which voice spoke which text. */
function recordingSynthesizer() {
  const spoken: { text: string; voiceId: string }[] = [];
  const synthesizer: SpeechSynthesizer = {
    voices: () => espeak.voices(),
    synthesize: (text, voice) => {
      spoken.push({ text, voiceId: voice.voiceId });
      return espeak.synthesize(text, voice);
    },
    close: async () => {},
  };
  return { synthesizer, spoken };
}

const turn = (
  index: number,
  speaker: CallTurn['speaker'],
  text: string,
  startMs: number,
  endMs: number,
  extra: Partial<CallTurn> = {},
): CallTurn => ({
  index,
  speaker,
  text,
  dtmf: null,
  startMs,
  endMs,
  interrupted: false,
  latency: null,
  segments: [],
  ...extra,
});

/** RMS of the samples between two offsets (ms). */
function rmsBetween(wav: Buffer, info: WavInfo, fromMs: number, toMs: number): number {
  const from = Math.floor((fromMs * info.sampleRate) / 1000);
  const to = Math.min(Math.floor((toMs * info.sampleRate) / 1000), info.dataBytes / 2);
  let sum = 0;
  for (let i = from; i < to; i++) sum += wav.readInt16LE(info.dataOffset + i * 2) ** 2;
  return to > from ? Math.sqrt(sum / (to - from)) : 0;
}

const assistantVoice = { voiceId: 'cmn+f3', speed: 1, volume: 80 };
const calleeVoice = { voiceId: 'cmn+m3', speed: 1, volume: 80 };

describe('mixRecording', () => {
  it('lays both voices out at their turns, cuts an interrupted line, and re-times the turns', async () => {
    const turns = [
      turn(0, 'assistant', '您好，请问是王先生吗？', 0, 2500),
      turn(1, 'callee', '是我，你说。', 3000, 4200),
      turn(
        2,
        'assistant',
        '我们最近推出了千兆宽带优惠套餐，每个月只要九十九元，还送一年的视频会员，想跟您介绍一下。',
        5000,
        6500,
        {
          interrupted: true,
        },
      ),
      turn(3, 'callee', '不需要，谢谢。', 6200, 7500),
      turn(4, 'assistant', '', 8000, 8000),
      turn(5, 'callee', '', 9000, 9300, { dtmf: '1' }),
      turn(6, 'assistant', '好的，再见。', 10_000, 11_000),
    ];
    const { synthesizer, spoken } = recordingSynthesizer();
    const mixed = await mixRecording({ turns, synthesizer, assistantVoice, calleeVoice });

    expect(spoken).toEqual([
      { text: turns[0]!.text, voiceId: 'cmn+f3' },
      { text: turns[1]!.text, voiceId: 'cmn+m3' },
      { text: turns[2]!.text, voiceId: 'cmn+f3' },
      { text: turns[3]!.text, voiceId: 'cmn+m3' },
      { text: turns[6]!.text, voiceId: 'cmn+f3' },
    ]);
    const info = readWav(mixed.wav);
    expect(info).toMatchObject({ channels: 1, bitsPerSample: 16 });
    expect(Math.abs(info.durationMs - mixed.durationMs)).toBeLessThanOrEqual(1);
    expect(Math.abs(mixed.durationMs - mixed.turns.at(-1)!.endMs)).toBeLessThanOrEqual(2);

    const audible = mixed.turns.filter((t) => t.endMs > t.startMs);
    expect(audible.map((t) => t.index)).toEqual([0, 1, 2, 3, 5, 6]);
    for (const t of audible) {
      expect(t.startMs, `turn ${t.index} not before its recorded offset`).toBeGreaterThanOrEqual(
        turns[t.index]!.startMs,
      );
      expect(rmsBetween(mixed.wav, info, t.startMs, t.endMs), `turn ${t.index} is heard`).toBeGreaterThan(
        200,
      );
    }
    for (let i = 1; i < audible.length; i++) {
      const previous = audible[i - 1]!;
      const current = audible[i]!;
      expect(current.startMs).toBeGreaterThanOrEqual(previous.endMs + TURN_GAP_MS - 1);
      expect(
        rmsBetween(mixed.wav, info, previous.endMs + 5, current.startMs - 5),
        'silence between turns',
      ).toBe(0);
    }
    // The interrupted line is heard only until the callee came in (1.2 s into it).
    const cut = mixed.turns[2]!;
    expect(cut.endMs - cut.startMs).toBeLessThanOrEqual(1_250);
    // The empty turn takes no time; the DTMF press is a short tone.
    expect(mixed.turns[4]!.endMs).toBe(mixed.turns[4]!.startMs);
    expect(mixed.turns[5]!.endMs - mixed.turns[5]!.startMs).toBeLessThan(300);
    expect(mixed.turns.map((t) => t.text)).toEqual(turns.map((t) => t.text));
  });

  it('keeps the two sides apart when both were given the same voice', async () => {
    const { synthesizer, spoken } = recordingSynthesizer();
    await mixRecording({
      turns: [turn(0, 'assistant', '您好。', 0, 800), turn(1, 'callee', '你好。', 1200, 2000)],
      synthesizer,
      assistantVoice,
      calleeVoice: assistantVoice,
    });
    expect(spoken[0]!.voiceId).not.toBe(spoken[1]!.voiceId);
  });
});

describe('LocalRecordingStore', () => {
  it('stores, measures, streams byte ranges and deletes recordings', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'recordings-'));
    try {
      const store = new LocalRecordingStore(dir);
      const data = Buffer.from(Array.from({ length: 1000 }, (_, i) => i % 256));
      await store.put('project-1/call-1.wav', data);
      expect(await store.size('project-1/call-1.wav')).toBe(1000);
      expect(await store.size('project-1/missing.wav')).toBeNull();
      expect(await readdir(path.join(dir, 'project-1'))).toEqual(['call-1.wav']);

      const read = async (range?: { start: number; end: number }) => {
        const chunks: Buffer[] = [];
        for await (const chunk of store.stream('project-1/call-1.wav', range)) chunks.push(chunk as Buffer);
        return Buffer.concat(chunks);
      };
      expect((await read()).equals(data)).toBe(true);
      expect((await read({ start: 100, end: 199 })).equals(data.subarray(100, 200))).toBe(true);
      expect((await read({ start: 990, end: 999 })).equals(data.subarray(990))).toBe(true);

      await store.delete('project-1/call-1.wav');
      expect(await store.size('project-1/call-1.wav')).toBeNull();
      await store.delete('project-1/call-1.wav');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('refuses keys that could leave the recordings directory', async () => {
    const store = new LocalRecordingStore(path.join(tmpdir(), 'recordings-refuse'));
    for (const key of [
      '../secret.wav',
      'a/../../b.wav',
      '/etc/passwd',
      'a\\..\\b',
      '',
      'a//b',
      './a',
      'C:/x',
    ]) {
      await expect(store.put(key, Buffer.from('x')), key).rejects.toThrow('invalid recording key');
      await expect(store.size(key), key).rejects.toThrow('invalid recording key');
      expect(() => store.stream(key), key).toThrow('invalid recording key');
    }
  });
});
