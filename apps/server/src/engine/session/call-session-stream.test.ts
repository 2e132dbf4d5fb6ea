import { assistantConfig, type CallTurn } from '@callpilot/contracts';
import { describe, expect, it } from 'vitest';
import type { Brain, BrainEvent } from '../brain/types';
import { systemClock } from '../clock';
import type { CallLeg, PlayResult, StreamedPlayResult, Utterance } from '../telephony/types';
import { runCallSession } from './call-session';

/*
 * The session over a leg that streams (a real line): the brain's reply reaches the leg sentence
 * by sentence while the brain is still writing, and the turn's latency is measured from the
 * caller's audio to the reply's first audio.
 */

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A line whose caller says `utterances` in turn and then hangs up; it records what reaches it and when. */
function scriptedLeg(utterances: Partial<Utterance>[]) {
  const log: { kind: 'say' | 'sentence'; text: string; at: number }[] = [];
  let ended: { by: 'remote' | 'local'; at: number } | null = null;
  let resolveEnded: (end: { by: 'remote' | 'local'; at: number }) => void = () => {};
  const whenEnded = new Promise<{ by: 'remote' | 'local'; at: number }>((resolve) => {
    resolveEnded = resolve;
  });
  const end = (by: 'remote' | 'local') => {
    if (ended) return;
    ended = { by, at: Date.now() };
    resolveEnded(ended);
  };
  const played = (startedAt: number): PlayResult => ({
    interrupted: false,
    playedMs: Date.now() - startedAt,
    startedAt,
    endedAt: Date.now(),
    synthesisMs: 0,
  });
  const leg: CallLeg = {
    id: 'leg',
    direction: 'outbound',
    from: '02160881000',
    to: '13800000000',
    answeredAt: Date.now(),
    isVoicemail: false,
    recordsLine: true,
    get ended() {
      return ended;
    },
    whenEnded,
    async say(text) {
      const at = Date.now();
      log.push({ kind: 'say', text, at });
      await sleep(20);
      return played(at);
    },
    async sayStream(sentences): Promise<StreamedPlayResult> {
      const at = Date.now();
      const texts: string[] = [];
      let firstPlayAt: number | undefined;
      for await (const sentence of sentences) {
        firstPlayAt ??= Date.now() + 30;
        log.push({ kind: 'sentence', text: sentence, at: Date.now() });
        texts.push(sentence);
        await sleep(20);
      }
      return {
        ...played(at),
        text: texts.join(''),
        firstAudioMs: 30,
        firstPlayAt,
        fallback: texts.length > 2,
      };
    },
    async listen() {
      const next = utterances.shift();
      if (!next) {
        end('remote');
        return null;
      }
      const now = Date.now();
      return {
        text: '',
        dtmf: null,
        startedAt: now - 1500,
        endedAt: now - 800,
        recognitionMs: 100,
        endpointMs: 700,
        ...next,
      };
    },
    async sendDtmf() {},
    async transfer() {
      return { ok: false };
    },
    async hangup() {
      end('local');
    },
  };
  return { leg, log };
}

/** A model writing its reply in small pieces, `gapMs` apart, then the `after` events. */
function writingBrain(pieces: string[], gapMs: number, after: BrainEvent[] = []) {
  const done: { at: number | null } = { at: null };
  const brain: Brain = {
    mode: 'llm',
    async *turn() {
      for (const text of pieces) {
        await sleep(gapMs);
        yield { type: 'delta', text };
      }
      done.at = Date.now();
      yield* after;
    },
  };
  return { brain, done };
}

async function run(leg: CallLeg, brain: Brain) {
  const config = assistantConfig.parse({ openingLine: '您好，我是小星。' });
  const turns: CallTurn[] = [];
  const optOuts: string[] = [];
  const result = await runCallSession(
    { callId: 'call', config, leg, remoteNumber: '13800000000' },
    {
      clock: systemClock,
      brain,
      retrieve: async () => null,
      optOut: async (phone) => {
        optOuts.push(phone);
      },
    },
    { onTurn: (turn) => void turns.push(turn) },
  );
  return { result, turns, optOuts };
}

describe('streamed replies in the session', () => {
  it('hands the first sentence to the line before the brain has finished the reply', async () => {
    const { leg, log } = scriptedLeg([{ text: '你们的套餐多少钱？', fallback: true }]);
    const { brain, done } = writingBrain(
      ['好的，', '我们的', '千兆套餐', '每月', '九十九元。', '现在办理', '还送一个月。'],
      60,
    );
    const { turns } = await run(leg, brain);

    const first = log.find((entry) => entry.kind === 'sentence');
    expect(first?.text).toBe('好的，我们的千兆套餐每月九十九元。');
    expect(first!.at).toBeLessThan(done.at!);
    expect(log.filter((entry) => entry.kind === 'sentence').map((entry) => entry.text)).toEqual([
      '好的，我们的千兆套餐每月九十九元。',
      '现在办理还送一个月。',
    ]);
    // Recorded once, as the turn that answered, with the streamed latencies.
    const answer = turns.find((turn) => turn.speaker === 'assistant' && turn.text.startsWith('好的'));
    expect(answer?.text).toBe('好的，我们的千兆套餐每月九十九元。现在办理还送一个月。');
    expect(turns.filter((turn) => turn.text.includes('九十九元'))).toHaveLength(1);
    expect(answer?.latency?.endpointMs).toBe(700);
    expect(answer?.latency?.firstSentenceMs).toBeGreaterThan(250);
    expect(answer?.latency?.firstSentenceMs).toBeLessThan(answer!.latency!.brainMs);
    expect(answer?.latency?.firstAudioMs).toBe(30);
    // From the caller's last voiced audio (800 ms before listen returned) to the first audio out.
    expect(answer?.latency?.replyStartMs).toBeGreaterThan(800 + 250);
    expect(answer?.latency?.fallbacks).toEqual(['recognition']);
  });

  it('keeps an opt-out whose goodbye was streamed, and does not say it twice', async () => {
    const { leg, log } = scriptedLeg([{ text: '以后别给我打电话了' }]);
    const { brain } = writingBrain(['好的，', '已为您登记，', '以后不再打扰。', '再见。'], 10, [
      { type: 'action', action: 'opt_out', detail: '客户要求不再来电' },
      { type: 'action', action: 'end_call', detail: '客户拒绝' },
    ]);
    const { result, optOuts } = await run(leg, brain);
    expect(result.endReason).toBe('opt_out');
    expect(optOuts).toEqual(['13800000000']);
    const spoken = log.map((entry) => entry.text).join('');
    expect(spoken.match(/以后不再打扰/g)).toHaveLength(1);
  });

  it('says the fallback line when the brain wrote nothing', async () => {
    const { leg, log } = scriptedLeg([{ text: '喂？' }]);
    const { brain } = writingBrain([], 10);
    await run(leg, brain);
    const defaults = assistantConfig.parse({}).conversation;
    expect(log.some((entry) => entry.kind === 'say' && entry.text === defaults.fallbackReply)).toBe(true);
  });
});
