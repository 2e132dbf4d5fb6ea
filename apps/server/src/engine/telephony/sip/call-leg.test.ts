import { EventEmitter } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../clock';
import { createEspeakSynthesizer } from '../../speech/espeak';
import { wavToPcm } from '../../speech/resample';
import type { SpeechRecognizer } from '../../speech/types';
import { loadVad, type Vad } from '../../speech/vad';
import type { MediaSession } from '../media/media-engine';
import { SipCallLeg } from './call-leg';
import type { InviteSession } from './user-agent';

/*
 * Barge-in on a real line, with the real VAD and real Mandarin speech (the offline synthesiser at
 * 8 kHz): the far end's media session is played by an in-memory stand-in that plays at real time
 * and stops when told, so what is measured is the leg's decision, not RTP.
 */

const synthesizer = createEspeakSynthesizer();
let vad: Vad;
let caller: Int16Array;

beforeAll(async () => {
  vad = await loadVad();
  const voice = { voiceId: 'cmn+m3', speed: 1, volume: 80 };
  caller = wavToPcm((await synthesizer.synthesize('不用了，谢谢，我现在不需要。', voice)).audio);
});
afterAll(() => synthesizer.close());

/** The media worker as the leg sees it: audio batches in, playback that can be cut short. */
class FakeMedia extends EventEmitter {
  stoppedAt: number | null = null;
  private finish: ((outcome: { playedMs: number; interrupted: boolean }) => void) | null = null;
  private playStarted = 0;

  play(pcm: Int16Array) {
    this.playStarted = performance.now();
    return new Promise<{ playedMs: number; interrupted: boolean }>((resolve) => {
      const timer = setTimeout(
        () => resolve({ playedMs: pcm.length / 8, interrupted: false }),
        pcm.length / 8,
      );
      this.finish = (outcome) => {
        clearTimeout(timer);
        resolve(outcome);
      };
    });
  }

  async stopPlayback() {
    this.stoppedAt = performance.now();
    this.finish?.({ playedMs: Math.round(this.stoppedAt - this.playStarted), interrupted: true });
  }

  async setForwardAudio() {}
  async sendDtmf() {}
  async close() {}
}

function legWith(recognizer: SpeechRecognizer | null) {
  const media = new FakeMedia();
  let endCall: (end: { by: 'local' | 'remote' }) => void = () => {};
  const session = {
    whenEnded: new Promise((resolve) => {
      endCall = resolve;
    }),
    bye: async () => endCall({ by: 'local' }),
  } as unknown as InviteSession;
  const leg = new SipCallLeg({
    id: 'leg-1',
    direction: 'inbound',
    from: '13800000000',
    to: '02160881000',
    answeredAt: Date.now(),
    clock: systemClock,
    session,
    media: media as unknown as MediaSession,
    endpointer: vad.createEndpointer(),
    // Eight seconds of a steady tone: long enough to be talked over.
    synthesize: async () =>
      Int16Array.from({ length: 64_000 }, (_, i) =>
        Math.round(6000 * Math.sin((2 * Math.PI * 300 * i) / 8000)),
      ),
    recognizer,
    transfer: async () => ({ ok: false }),
  });
  return { leg, media };
}

/**
 * The caller talks over the assistant: 300 ms of quiet line, the sentence, then a second of quiet
 * for the VAD to hear the end, in 80 ms batches as the worker forwards them.
 */
async function talkOver(media: FakeMedia) {
  const audio = new Int16Array(2400 + caller.length + 8000);
  audio.set(caller, 2400);
  let speechFrom: number | null = null;
  for (let offset = 0; offset < audio.length; offset += 640) {
    if (offset >= 2400 && speechFrom === null) speechFrom = performance.now();
    media.emit('audio', audio.slice(offset, offset + 640));
    await new Promise((resolve) => setTimeout(resolve, 80));
  }
  return { speechFrom: speechFrom ?? performance.now() };
}

describe('SIP leg barge-in', () => {
  it('stops the assistant soon after the caller starts talking, and hands over what was said', async () => {
    const recognizer: SpeechRecognizer = {
      transcribe: async () => ({ text: '不用了，谢谢。', durationMs: 120 }),
    };
    const { leg, media } = legWith(recognizer);
    const said = leg.say('（长句）', { interruptible: true });
    await new Promise((resolve) => setTimeout(resolve, 100));
    const talking = talkOver(media);
    const played = await said;
    const { speechFrom } = await talking;

    expect(played.interrupted).toBe(true);
    expect(media.stoppedAt).not.toBeNull();
    // The VAD needs a few frames of speech to decide; well under half a second after it starts.
    expect((media.stoppedAt as number) - speechFrom).toBeLessThan(500);
    const heard = await leg.listen({ timeoutMs: 5000 });
    expect(heard?.text).toBe('不用了，谢谢。');
    await leg.hangup();
  }, 30_000);

  it('without a recogniser lets the assistant finish: words it cannot understand do not cut it off', async () => {
    const { leg, media } = legWith(null);
    const said = leg.say('（长句）', { interruptible: true });
    await new Promise((resolve) => setTimeout(resolve, 100));
    await talkOver(media);
    expect(media.stoppedAt).toBeNull();
    // A key still does.
    media.emit('dtmf', '1');
    const played = await said;
    expect(played.interrupted).toBe(true);
    await leg.hangup();
  }, 30_000);
});
