import { describe, expect, it } from 'vitest';
import { analyzeVoiceSample, voicedPitches } from './voice-sample';
import { type SyntheticReadingOptions, syntheticReading } from './voice-sample-testing';

const MAN = { f0: 120 };
const WOMAN = { f0: 210 };

const read = (over: Partial<SyntheticReadingOptions> = {}) => {
  const options: SyntheticReadingOptions = { seconds: 12, sampleRate: 16000, voices: [WOMAN], ...over };
  return analyzeVoiceSample(syntheticReading(options), options.sampleRate);
};
const codes = (analysis: ReturnType<typeof analyzeVoiceSample>) => analysis.problems.map((p) => p.code);

describe('voice sample check', () => {
  it('passes one reader, man or woman, at the rates browsers record at, and measures the sample', () => {
    for (const [voice, sampleRate, seed] of [
      [WOMAN, 16000, 1],
      [MAN, 16000, 2],
      [MAN, 48000, 3],
      [WOMAN, 44100, 4],
    ] as const) {
      const analysis = read({ voices: [voice], sampleRate, seed });
      expect(analysis.problems, `${voice.f0} Hz at ${sampleRate}`).toEqual([]);
      expect(analysis.durationMs).toBe(12000);
      expect(analysis.loudnessDb).toBeGreaterThan(-25);
      expect(analysis.loudnessDb).toBeLessThan(-10);
      expect(analysis.clippedRatio).toBe(0);
    }
  });

  it('tracks the pitch without octave errors (which would pass for a second, lower voice)', () => {
    const pitches = voicedPitches(syntheticReading({ seconds: 12, sampleRate: 16000, voices: [MAN] }), 16000);
    const median = [...pitches].sort((a, b) => a - b)[Math.floor(pitches.length / 2)] as number;
    expect(median).toBeGreaterThan(100);
    expect(median).toBeLessThan(145);
    expect(pitches.filter((f0) => f0 < 80).length / pitches.length).toBeLessThan(0.03);
  });

  it('accepts a lively reader whose tones swing 5 semitones each way, but flags a man and a woman taking turns', () => {
    for (const seed of [11, 12, 13]) {
      expect(codes(read({ voices: [{ f0: 170, toneRange: 5 }], seed }))).toEqual([]);
      const mixed = read({ voices: [MAN, WOMAN], seed });
      expect(codes(mixed)).toEqual(['multiple_speakers']);
      expect(mixed.problems[0]?.message).toBe(
        '录音中似乎有不止一个人的声音：请只保留一个人朗读的部分，避免他人插话或背景人声',
      );
    }
    // Turns of a different length and a deeper man: still two people.
    expect(
      codes(read({ voices: [{ f0: 105 }, { f0: 220 }], phraseSyllables: 4, sampleRate: 48000 })),
    ).toEqual(['multiple_speakers']);
  });

  it('names the length, the rate, the level, clipping and silence, each in words a user can act on', () => {
    expect(read({ seconds: 6 }).problems).toEqual([
      { code: 'too_short', message: '录音时长 6 秒，不足 10 秒：请连续朗读 10～20 秒' },
    ]);
    expect(read({ seconds: 25.5 }).problems).toEqual([
      { code: 'too_long', message: '录音时长 25.5 秒，超过 20 秒：请剪短或重录为 10～20 秒' },
    ]);
    expect(read({ sampleRate: 8000 }).problems).toEqual([
      {
        code: 'low_sample_rate',
        message: '采样率为 8000 Hz，低于 16000 Hz：请用 16 kHz 或更高的采样率录制（电话录音不能用于复刻）',
      },
    ]);
    const quiet = read({ amplitude: 0.01 });
    expect(codes(quiet)).toEqual(['too_quiet']);
    expect(quiet.problems[0]?.message).toMatch(/^音量太低（-4\d dB，至少需要 -35 dB）：请靠近麦克风/);

    const loud = syntheticReading({ seconds: 12, sampleRate: 16000, voices: [WOMAN] }).map((v) =>
      Math.max(-1, Math.min(1, v * 8)),
    );
    const clipped = analyzeVoiceSample(loud, 16000);
    expect(clipped.clippedRatio).toBeGreaterThan(0.01);
    expect(codes(clipped)).toContain('clipping');
    expect(clipped.problems.find((p) => p.code === 'clipping')?.message).toMatch(
      /^录音有爆音（\d+% 的采样达到满幅）：请调低麦克风音量/,
    );

    const halting = read({ pauseMs: 1500, phraseSyllables: 3 });
    expect(codes(halting)).toEqual(['too_much_silence']);
    expect(halting.silenceRatio).toBeGreaterThan(0.4);
    expect(halting.problems[0]?.message).toMatch(/^静音占了 \d+%：请连续朗读/);
  });

  it('says there is no voice at all in digital silence, and reports every problem at once', () => {
    expect(analyzeVoiceSample(new Float32Array(16000 * 12), 16000).problems).toEqual([
      { code: 'no_speech', message: '没有检测到说话声：请检查麦克风是否正常、是否选对了文件' },
    ]);
    expect(codes(read({ seconds: 5, sampleRate: 8000, amplitude: 0.01 }))).toEqual([
      'low_sample_rate',
      'too_short',
      'too_quiet',
    ]);
  });
});
