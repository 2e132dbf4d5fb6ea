import {
  type AssistantConfig,
  assistantConfig,
  type CallTurn,
  fillVariables,
  type RetrievedSegment,
  type SimPersona,
} from '@callpilot/contracts';
import { describe, expect, it } from 'vitest';
import { findTemplate } from '../../modules/assistants/assistants.templates';
import { createBrain } from '../brain/create-brain';
import type { Brain } from '../brain/types';
import type { KnowledgeLookup } from '../call/ports';
import { knowledgeLookup } from '../call/test-support';
import { VirtualClock } from '../clock';
import { createSimCarrier, type SimLeg } from '../telephony/sim/sim-carrier';
import { runCallSession, TRANSFER_FAILED_LINE } from './call-session';
import type { SessionResult } from './types';

const VARIABLES = { 客户姓名: '王先生', 公司名称: '星河宽带', 产品名称: '千兆宽带套餐' };
const CALLEE = '13800138000';

/** The customer follow-up template, filled as a contact's call would be, with `conversation` overrides. */
function followUpConfig(conversation: Partial<AssistantConfig['conversation']> = {}): AssistantConfig {
  const template = findTemplate('customer-follow-up');
  if (!template) throw new Error('template missing');
  const base = template.config;
  return assistantConfig.parse({
    ...base,
    openingLine: fillVariables(base.openingLine, VARIABLES),
    conversation: { ...base.conversation, ...conversation },
  });
}

const FAQ: RetrievedSegment = {
  id: 'seg-1',
  knowledgeBaseId: 'kb-1',
  documentId: 'doc-1',
  documentName: '常见问题.csv',
  content: '问：营业时间？\n答：每天上午九点到晚上九点。',
  question: '你们的营业时间是几点到几点？',
  answer: '我们每天上午九点到晚上九点营业。',
  score: 0.92,
};

interface CallOptions {
  persona: SimPersona;
  config?: AssistantConfig;
  seed?: number;
  brain?: Brain;
  transferFails?: boolean;
  retrieve?: (query: string) => Promise<KnowledgeLookup | null>;
  signal?: AbortSignal;
  clock?: VirtualClock;
  questions?: string[];
  handoff?: boolean;
  /** Time the line is up before the assistant takes it (a flow's prompts before the handoff). */
  idleBeforeMs?: number;
}

async function placeCall(options: CallOptions) {
  const clock = options.clock ?? new VirtualClock();
  const config = options.config ?? followUpConfig();
  const carrier = createSimCarrier({
    clock,
    seed: options.seed ?? 1,
    questions: options.questions,
    transferFails: () => options.transferFails ?? false,
  });
  const optOuts: { phone: string; reason: string }[] = [];
  const streamed: CallTurn[] = [];
  const transfers: { number: string; ok: boolean }[] = [];
  const outcome = await clock.run(async () => {
    const dial = await carrier.originate({
      callId: 'call-1',
      from: '02160880000',
      to: CALLEE,
      persona: options.persona,
    });
    if (!dial.answered) throw new Error(`not answered: ${dial.outcome}`);
    if (options.idleBeforeMs) await clock.sleep(options.idleBeforeMs);
    const result = await runCallSession(
      {
        callId: 'call-1',
        config,
        leg: dial.leg,
        remoteNumber: CALLEE,
        signal: options.signal,
        handoff: options.handoff,
      },
      {
        clock,
        brain: options.brain ?? createBrain({ config, provider: null }),
        retrieve: options.retrieve ?? (async () => null),
        optOut: async (phone, reason) => {
          optOuts.push({ phone, reason });
        },
      },
      {
        onTurn: (turn) => {
          streamed.push(turn);
        },
        onTransfer: (number, _at, ok) => {
          transfers.push({ number, ok });
        },
      },
    );
    return { result, leg: dial.leg as SimLeg };
  });
  return { ...outcome, optOuts, streamed, transfers, clock };
}

const texts = (result: SessionResult, speaker: 'assistant' | 'callee') =>
  result.turns.filter((t) => t.speaker === speaker).map((t) => t.text);

function expectWellFormedTurns(result: SessionResult, streamed: CallTurn[]) {
  expect(streamed).toEqual(result.turns);
  result.turns.forEach((turn, i) => {
    expect(turn.index).toBe(i);
    expect(turn.endMs).toBeGreaterThanOrEqual(turn.startMs);
  });
  const assistantStarts = result.turns.filter((t) => t.speaker === 'assistant').map((t) => t.startMs);
  expect([...assistantStarts].sort((a, b) => a - b)).toEqual(assistantStarts);
}

describe('runCallSession end reasons', () => {
  it('completed: an interested callee talks it through and says goodbye', async () => {
    const { result, streamed, leg } = await placeCall({ persona: 'interested' });
    expect(result).toMatchObject({ endReason: 'completed', hangupBy: 'assistant', error: null });
    expect(result.turns[0]).toMatchObject({ speaker: 'assistant', startMs: 0, latency: null });
    expect(result.turns[0]?.text).toContain('王先生');
    expect(texts(result, 'callee').at(-1)).toContain('再见');
    expect(texts(result, 'assistant').at(-1)).toBe(followUpConfig().conversation.closingLine);
    expect(result.liveGrade?.grade).toMatch(/[AB]/);
    expect(leg.ended?.by).toBe('local');
    expect(result.endedAt).toBe(leg.ended?.at);
    expectWellFormedTurns(result, streamed);
    // Replies carry their latency breakdown.
    const reply = result.turns.find((t) => t.speaker === 'assistant' && t.latency);
    // Retrieval and brain are real elapsed time (the script brain takes well under 50 ms).
    expect(reply?.latency).toMatchObject({ synthesisMs: 0 });
    expect(reply?.latency?.brainMs).toBeGreaterThanOrEqual(0);
    expect(reply?.latency?.brainMs).toBeLessThan(50);
    expect(reply?.latency?.firstTokenMs).toBeLessThanOrEqual(reply?.latency?.brainMs ?? 0);
    expect(reply?.latency?.recognitionMs).toBeGreaterThanOrEqual(150);
    expect(result.overheadMs.length).toBeGreaterThan(0);
  });

  it('completed: the config’s maxTurns ends the call with the closing line', async () => {
    const config = followUpConfig({ maxTurns: 2, endCallPhrases: ['拜拜'] });
    const { result } = await placeCall({ persona: 'hesitant', config });
    expect(result.endReason).toBe('completed');
    expect(texts(result, 'callee')).toHaveLength(2);
    expect(texts(result, 'assistant').at(-1)).toContain(config.conversation.closingLine);
  });

  it('callee_hangup: the callee hangs up mid-call', async () => {
    const { result, leg } = await placeCall({ persona: 'hangs_up' });
    expect(result).toMatchObject({ endReason: 'callee_hangup', hangupBy: 'callee' });
    expect(leg.ended?.by).toBe('remote');
    expect(result.endedAt).toBe(leg.ended?.at);
  });

  it('opt_out: a refusal puts the number on the do-not-call list and ends politely', async () => {
    const config = followUpConfig();
    const { result, optOuts } = await placeCall({ persona: 'refuses', config });
    expect(result.endReason).toBe('opt_out');
    expect(optOuts).toEqual([{ phone: CALLEE, reason: expect.stringContaining('客户要求不再来电') }]);
    expect(texts(result, 'assistant').at(-1)).toBe(config.conversation.optOutReply);
    expect(result.liveGrade?.grade).toBe('D');
  });

  it('transferred: a request for a human says the transfer line and bridges to the number', async () => {
    const config = followUpConfig({ transferNumber: '400-800-8000' });
    const { result, leg, transfers } = await placeCall({ persona: 'asks_human', config });
    expect(result).toMatchObject({ endReason: 'transferred', hangupBy: 'assistant' });
    expect(result.transfer).toMatchObject({ number: '400-800-8000', ok: true });
    expect(transfers).toEqual([{ number: '400-800-8000', ok: true }]);
    expect(leg.transferredTo).toBe('400-800-8000');
    expect(texts(result, 'assistant').at(-1)).toBe(config.conversation.transferLine);
  });

  it('a failed transfer apologises with the fallback and the call goes on', async () => {
    const config = followUpConfig({ transferNumber: '400-800-8000' });
    const { result, transfers } = await placeCall({ persona: 'asks_human', config, transferFails: true });
    expect(result.endReason).not.toBe('transferred');
    expect(result.transfer?.ok).toBe(false);
    expect(transfers[0]).toEqual({ number: '400-800-8000', ok: false });
    const apology = result.turns.find((t) => t.text.startsWith(TRANSFER_FAILED_LINE));
    expect(apology?.text).toContain(config.conversation.fallbackReply);
    // The callee was still heard after the failed transfer.
    expect(
      result.turns.findIndex((t) => t.speaker === 'callee' && t.index > (apology?.index ?? 0)),
    ).toBeGreaterThan(-1);
  });

  it('no transfer number: a request for a human gets the fallback reply', async () => {
    const config = followUpConfig({ transferNumber: '' });
    const { result } = await placeCall({ persona: 'asks_human', config });
    expect(result.transfer).toBeNull();
    expect(texts(result, 'assistant')).toContain(config.conversation.fallbackReply);
  });

  it('silence: re-prompts up to maxSilenceReprompts, then closes', async () => {
    const config = followUpConfig({ maxSilenceReprompts: 2, silenceTimeoutSec: 5 });
    const { result } = await placeCall({ persona: 'silent', config });
    expect(result).toMatchObject({ endReason: 'silence', hangupBy: 'assistant' });
    expect(texts(result, 'assistant')).toEqual([
      config.openingLine,
      config.conversation.silenceReprompt,
      config.conversation.silenceReprompt,
      config.conversation.closingLine,
    ]);
    expect(texts(result, 'callee')).toEqual([]);
  });

  it('max_duration: the call is closed once maxCallSeconds have passed since the answer', async () => {
    const config = followUpConfig({ maxCallSeconds: 30, silenceTimeoutSec: 10, maxSilenceReprompts: 5 });
    const { result, leg } = await placeCall({ persona: 'silent', config });
    expect(result.endReason).toBe('max_duration');
    expect(texts(result, 'assistant').at(-1)).toBe(config.conversation.closingLine);
    const closing = result.turns.at(-1)!;
    expect(closing.startMs).toBeGreaterThanOrEqual(30_000);
    expect(closing.startMs).toBeLessThan(31_000);
    expect(result.endedAt - leg.answeredAt).toBe(closing.endMs);
  });

  it('voicemail: hangs up without a word, or leaves the configured message', async () => {
    const silent = await placeCall({
      persona: 'voicemail',
      config: followUpConfig({ voicemailAction: 'hangup' }),
    });
    expect(silent.result).toMatchObject({ endReason: 'voicemail', turns: [] });
    const message = '您好，这里是星河宽带回访，稍后再联系您。';
    const left = await placeCall({
      persona: 'voicemail',
      config: followUpConfig({ voicemailAction: 'leave_message', voicemailMessage: message }),
    });
    expect(left.result.endReason).toBe('voicemail');
    expect(left.result.turns.map((t) => t.text)).toEqual([message]);
    expect(left.result.overheadMs).toEqual([]);
  });

  it('a brain that throws is not the call failing: the fallback line is said and the turn records why', async () => {
    const broken: Brain = {
      mode: 'llm',
      // biome-ignore lint/correctness/useYield: a brain that fails before its first word
      async *turn() {
        throw new Error('model exploded');
      },
    };
    const { result } = await placeCall({ persona: 'interested', brain: broken });
    expect(result.endReason).not.toBe('failed');
    expect(result.error ?? null).toBeNull();
    const failedTurns = result.turns.filter((t) => t.latency?.brainError === 'model exploded');
    expect(failedTurns.length).toBeGreaterThan(0);
    expect(failedTurns.every((t) => t.latency?.fallbacks?.includes('brain'))).toBe(true);
    // The caller heard something each time: never a silent turn.
    expect(failedTurns.every((t) => t.text.trim().length > 0)).toBe(true);
  });

  it('abort: the platform stopping a call hangs up and reports failed', async () => {
    const clock = new VirtualClock();
    const controller = new AbortController();
    void clock.sleep(20_000).then(() => controller.abort(new Error('server stopping')));
    const { result, leg } = await placeCall({ persona: 'hesitant', clock, signal: controller.signal });
    expect(result).toMatchObject({ endReason: 'failed', hangupBy: 'system', error: null });
    expect(leg.ended?.by).toBe('local');
  });
});

describe('runCallSession handed a line by a flow (handoff)', () => {
  it('a caller asking for a person is handed back after the transfer line: nothing dialled, the line stays up', async () => {
    const config = followUpConfig({ transferNumber: '400-800-8000' });
    const { result, leg, transfers, clock } = await placeCall({
      persona: 'asks_human',
      config,
      handoff: true,
    });
    expect(result).toMatchObject({
      endReason: 'transferred',
      transferRequested: true,
      transfer: null,
      error: null,
    });
    expect(transfers).toEqual([]);
    expect(leg.transferredTo).toBeNull();
    expect(leg.ended).toBeNull();
    expect(texts(result, 'assistant').at(-1)).toBe(config.conversation.transferLine);
    // The flow goes on speaking on the same line.
    const played = await clock.run(leg.say('请稍候。', { interruptible: false }));
    expect(played.playedMs).toBeGreaterThan(0);
    await leg.hangup();
  });

  it('a conversation that ends leaves the line up for the flow; without handoff the same call hangs up', async () => {
    const handed = await placeCall({ persona: 'interested', handoff: true });
    expect(handed.result).toMatchObject({ endReason: 'completed', transferRequested: false });
    expect(handed.leg.ended).toBeNull();
    expect(handed.result.endedAt).toBe(handed.clock.now());
    await handed.leg.hangup();

    const alone = await placeCall({ persona: 'interested' });
    expect(alone.result).toMatchObject({ endReason: 'completed', transferRequested: false });
    expect(alone.leg.ended?.by).toBe('local');
  });

  it('the assistant’s maxCallSeconds count from the handoff, not from the answer', async () => {
    const config = followUpConfig({ maxCallSeconds: 30, silenceTimeoutSec: 10, maxSilenceReprompts: 5 });
    const { result, leg } = await placeCall({
      persona: 'silent',
      config,
      handoff: true,
      idleBeforeMs: 60_000,
    });
    expect(result.endReason).toBe('max_duration');
    const closing = result.turns.at(-1)!;
    // Offsets stay on the call's timeline (the recording's): the handoff came 60 s in.
    expect(result.turns[0]?.startMs).toBe(60_000);
    expect(closing.startMs).toBeGreaterThanOrEqual(90_000);
    expect(closing.startMs).toBeLessThan(91_000);
    expect(leg.ended).toBeNull();
    await leg.hangup();
  });
});

describe('runCallSession turns', () => {
  it('barge-in: interrupted lines only when the assistant allows interruption', async () => {
    const interrupted = async (allowInterrupt: boolean) => {
      let count = 0;
      for (let seed = 0; seed < 12; seed++) {
        const { result } = await placeCall({
          persona: 'refuses',
          seed,
          config: followUpConfig({ allowInterrupt }),
        });
        const cut = result.turns.filter((t) => t.interrupted);
        count += cut.length;
        for (const turn of cut) {
          const next = result.turns[turn.index + 1];
          expect(next?.speaker).toBe('callee');
          expect(next!.startMs).toBeLessThan(turn.endMs);
        }
      }
      return count;
    };
    expect(await interrupted(true)).toBeGreaterThan(0);
    expect(await interrupted(false)).toBe(0);
  });

  it('DTMF: a key press is a callee turn with its digit', async () => {
    const config = followUpConfig();
    config.openingLine = '您好，这里是星河宽带。如需了解千兆宽带套餐请按1，不需要请按2。';
    const { result } = await placeCall({ persona: 'interested', config });
    expect(result.turns[1]).toMatchObject({ speaker: 'callee', text: '', dtmf: '1' });
  });

  it('knowledge: an answered question records the segments used', async () => {
    const { result } = await placeCall({
      persona: 'asks_question',
      questions: [FAQ.question!],
      retrieve: async (query) => knowledgeLookup(query.includes('营业时间') ? [FAQ] : []),
    });
    expect(texts(result, 'callee')[0]).toContain(FAQ.question);
    const answered = result.turns.find((t) => t.segments.length > 0);
    expect(answered).toMatchObject({ speaker: 'assistant', text: FAQ.answer, index: 2 });
    expect(answered?.segments).toEqual([
      {
        id: FAQ.id,
        knowledgeBaseId: FAQ.knowledgeBaseId,
        documentName: FAQ.documentName,
        content: FAQ.content,
        score: FAQ.score,
      },
    ]);
    // Without a hit the fallback line answers.
    expect(texts(result, 'assistant')).toContain(followUpConfig().conversation.fallbackReply);
  });

  it('knowledge: a refused question records nothing used, keeps the nearest candidate, and the model times', async () => {
    const nearest = { ...FAQ, id: 'seg-near', score: 0.21 };
    const { result } = await placeCall({
      persona: 'asks_question',
      questions: [FAQ.question!],
      retrieve: async (query) =>
        knowledgeLookup([], {
          verdict: query.includes('营业时间') ? 'low_confidence' : 'no_match',
          confidence: query.includes('营业时间') ? 0.21 : 0,
          nearest: query.includes('营业时间') ? nearest : null,
          rewriteMs: 120,
          rerankMs: 340,
        }),
    });
    const question = result.turns.find((t) => t.speaker === 'callee' && t.text.includes(FAQ.question!))!;
    const reply = result.turns[question.index + 1]!;
    // The FAQ's answer is never read out: the verdict refused it.
    expect(reply.text).not.toContain(FAQ.answer!);
    expect(reply.text).toContain(followUpConfig().conversation.fallbackReply);
    expect(reply.segments).toEqual([
      {
        id: 'seg-near',
        knowledgeBaseId: FAQ.knowledgeBaseId,
        documentName: FAQ.documentName,
        content: FAQ.content,
        score: 0.21,
        used: false,
      },
    ]);
    expect(reply.latency).toMatchObject({ rewriteMs: 120, rerankMs: 340 });
  });

  it('the same seed replays the same call, turn for turn', async () => {
    for (const persona of ['interested', 'hesitant', 'asks_question', 'hangs_up'] as const) {
      const first = await placeCall({ persona, seed: 9 });
      const second = await placeCall({ persona, seed: 9 });
      // Latencies are real elapsed time and differ between runs; everything else must not.
      const timeless = (turns: typeof first.result.turns) =>
        turns.map((turn) => ({
          ...turn,
          latency: turn.latency && { recognitionMs: turn.latency.recognitionMs },
        }));
      expect(timeless(second.result.turns), persona).toEqual(timeless(first.result.turns));
      expect(second.result.endedAt).toBe(first.result.endedAt);
    }
  });
});

describe('1,000 concurrent simulated calls', () => {
  it('finish in seconds of wall time on the virtual clock, with every kind of ending', async () => {
    const clock = new VirtualClock();
    const carrier = createSimCarrier({ clock, seed: 'bench' });
    const config = followUpConfig({ transferNumber: '400-800-8000' });
    const brain = createBrain({ config, provider: null });
    const started = performance.now();
    const outcomes = await clock.run(
      Promise.all(
        Array.from({ length: 1000 }, async (_, i) => {
          const callId = `bulk-${i}`;
          const dial = await carrier.originate({
            callId,
            from: '02160880000',
            to: `138${String(i).padStart(8, '0')}`,
          });
          if (!dial.answered) return { endReason: dial.outcome, overheadMs: [] as number[], turns: 0 };
          const result = await runCallSession(
            { callId, config, leg: dial.leg, remoteNumber: dial.leg.to },
            { clock, brain, retrieve: async () => null, optOut: async () => {} },
            { onTurn: () => {} },
          );
          return { endReason: result.endReason, overheadMs: result.overheadMs, turns: result.turns.length };
        }),
      ),
    );
    const wallMs = performance.now() - started;
    expect(wallMs).toBeLessThan(8_000);
    const reasons = new Set(outcomes.map((o) => o.endReason));
    for (const reason of [
      'completed',
      'callee_hangup',
      'opt_out',
      'transferred',
      'busy',
      'no_answer',
      'voicemail',
    ]) {
      expect(reasons, reason).toContain(reason);
    }
    expect(outcomes.filter((o) => o.endReason === 'failed')).toEqual([]);
    const overhead = outcomes.flatMap((o) => o.overheadMs).sort((a, b) => a - b);
    const p99 = overhead[Math.floor(overhead.length * 0.99)] ?? 0;
    // The bench holds the real budget (5 ms); here only a sanity bound on a shared test machine.
    expect(p99).toBeLessThan(25);
    expect(carrier.activeLegs).toBe(0);
  });
});
