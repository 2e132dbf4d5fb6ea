import { performance } from 'node:perf_hooks';
import {
  assistantConversation,
  type BrainAction,
  type CallTurn,
  type ChatMessage,
  type EndReason,
  type HangupBy,
  type IntentGrade,
  type RetrievedSegment,
  type TurnLatency,
  type UsedSegment,
} from '@callpilot/contracts';
import type { KnowledgeLookup } from '../call/ports';
import { SentenceCutter } from '../speech/sentences';
import type { PlayResult, StreamedPlayResult, Utterance } from '../telephony/types';
import { ReplyQueue } from './reply-queue';
import type { SessionDeps, SessionEvents, SessionInput, SessionResult } from './types';

const DEFAULTS = assistantConversation.parse({});
/** Said before the fallback when the human desk did not pick up. */
export const TRANSFER_FAILED_LINE = '抱歉，人工客服暂时无法接通。';

/**
 * How long the brain may stay silent (before its first word, and between words) before the turn
 * gives up on it and says the fallback line: a caller hears dead air after about this long, and
 * hangs up not long after. Real time: the provider is real even on a simulated clock.
 */
export const BRAIN_SILENCE_BUDGET_MS = 8000;

const elapsedSince = (start: number) => Math.round((performance.now() - start) * 10) / 10;

const line = (value: string, fallback: string) => (value.trim() ? value : fallback);

const toUsedSegment = (s: RetrievedSegment): UsedSegment => ({
  id: s.id,
  knowledgeBaseId: s.knowledgeBaseId,
  documentName: s.documentName,
  content: s.content,
  score: s.score,
});

/**
 * What the reply turn records of its knowledge: the segments answered from; a refused question
 * records none used but keeps its nearest candidate (used: false), which the knowledge report
 * shows as what came closest to the gap.
 */
const turnSegments = (lookup: KnowledgeLookup | null): UsedSegment[] => {
  if (!lookup) return [];
  if (lookup.segments.length > 0) return lookup.segments.map(toUsedSegment);
  return lookup.nearest ? [{ ...toUsedSegment(lookup.nearest), used: false }] : [];
};

/** D outweighs everything once heard; otherwise the strongest interest shown wins. */
function strongerGrade(
  current: { grade: IntentGrade; reason: string } | null,
  next: { grade: IntentGrade; reason: string },
) {
  if (!current || next.grade === 'D') return next;
  if (current.grade === 'D') return current;
  return next.grade < current.grade ? next : current;
}

/**
 * The session's own CPU time per assistant turn: performance.now() around the synchronous stretches
 * between awaits, so brain, retrieval, leg and clock waits are excluded. This is what the bench's
 * "engine overhead per turn" budget measures.
 */
class CpuMeter {
  private since = 0;
  private total = 0;
  resume() {
    this.since = performance.now();
  }
  pause() {
    this.total += performance.now() - this.since;
  }
  take(): number {
    const value = this.total;
    this.total = 0;
    return value;
  }
}

/** Thrown inside the session to stop the call; caught at the top and never leaves runCallSession. */
class CallOver extends Error {
  constructor(
    readonly endReason: EndReason,
    readonly hangupBy: HangupBy,
  ) {
    super(endReason);
  }
}

/**
 * Runs one assistant over an answered leg, from the opening line to hang-up, and reports every
 * turn as it happens. It never throws for something that went wrong on the call: an error ends
 * the call as `failed` (hung up by the system).
 *
 * Abort (input.signal): the platform is stopping the call (server shutdown, the console's stop).
 * The leg is hung up and the call ends `failed` / system, unless the callee had already hung up,
 * which stays `callee_hangup`.
 *
 * Silence: the session speaks the configured re-prompt itself (no brain turn, so no model cost
 * for dead air) up to maxSilenceReprompts times, then says the closing line and ends `silence`.
 * A silence still counts as a brain turn index, as BrainTurn documents.
 *
 * Handoff (input.handoff): an IVR flow lent the line. The session ends without hanging up, and a
 * request for a person ends it as `transferred` with `transferRequested` after the transfer line,
 * nothing dialled: the flow's own transfer node takes it from there.
 */
export async function runCallSession(
  input: SessionInput,
  deps: SessionDeps,
  events: SessionEvents,
): Promise<SessionResult> {
  const { config, leg } = input;
  const { clock, brain } = deps;
  const c = config.conversation;
  const turns: CallTurn[] = [];
  const overheadMs: number[] = [];
  const history: ChatMessage[] = [];
  const actionsSeen: { action: BrainAction; detail: string; at: number }[] = [];
  let liveGrade: SessionResult['liveGrade'] = null;
  let transfer: SessionResult['transfer'] = null;
  let transferRequested = false;
  const meter = new CpuMeter();
  const brainAbort = new AbortController();
  // A flow may hand the line over minutes into the call: the assistant's own limit starts now.
  const maxEndAt = (input.handoff ? clock.now() : leg.answeredAt) + c.maxCallSeconds * 1000;
  const closing = line(c.closingLine, DEFAULTS.closingLine);
  let aborted = false;

  const onAbort = () => {
    aborted = true;
    brainAbort.abort(input.signal?.reason);
    void leg.hangup();
  };
  if (input.signal?.aborted) onAbort();
  else input.signal?.addEventListener('abort', onAbort, { once: true });

  const offset = (at: number) => Math.max(0, Math.round(at - leg.answeredAt));

  /** Why the line is gone, if it is: the callee hung up first, or the platform aborted. */
  const lineGone = (): { endReason: EndReason; hangupBy: HangupBy } | null => {
    if (leg.ended?.by === 'remote') return { endReason: 'callee_hangup', hangupBy: 'callee' };
    if (aborted || leg.ended) return { endReason: 'failed', hangupBy: 'system' };
    return null;
  };
  const checkLine = () => {
    const gone = lineGone();
    if (gone) throw new CallOver(gone.endReason, gone.hangupBy);
  };

  const emit = async (turn: Omit<CallTurn, 'index'>) => {
    const full: CallTurn = { index: turns.length, ...turn };
    turns.push(full);
    meter.pause();
    await events.onTurn(full);
    meter.resume();
  };

  type LineExtra = { latency?: TurnLatency | null; segments?: UsedSegment[]; interruptible?: boolean };

  const say = async (text: string, extra: LineExtra = {}): Promise<PlayResult | null> => {
    if (!text.trim()) return null;
    const interruptible = (extra.interruptible ?? true) && c.allowInterrupt;
    meter.pause();
    const played = await leg.say(text, { interruptible, speed: config.voice.speed });
    meter.resume();
    const latency = extra.latency ? { ...extra.latency, synthesisMs: played.synthesisMs ?? 0 } : null;
    await said(text, played, latency, extra.segments);
    return played;
  };

  /** Records a line the leg has played: the conversation the brain sees, and the turn. */
  const said = async (
    text: string,
    played: PlayResult,
    latency: TurnLatency | null,
    segments?: UsedSegment[],
  ) => {
    history.push({ role: 'assistant', content: text });
    await emit({
      speaker: 'assistant',
      text,
      dtmf: null,
      startMs: offset(played.startedAt),
      endMs: offset(played.endedAt),
      interrupted: played.interrupted,
      latency,
      segments: segments ?? [],
    });
  };

  /**
   * Says a last line and ends the call for `endReason`. The decision is made, so a callee who
   * hangs up during the goodbye does not change the reason, only who hung up.
   */
  const finish = async (lastLine: string | null, endReason: EndReason): Promise<never> => {
    checkLine();
    if (lastLine) await say(lastLine, { interruptible: false });
    if (aborted && leg.ended?.by !== 'remote') throw new CallOver('failed', 'system');
    throw new CallOver(endReason, leg.ended?.by === 'remote' ? 'callee' : 'assistant');
  };

  let result: { endReason: EndReason; hangupBy: HangupBy };
  let failure: unknown = null;
  meter.resume();
  try {
    checkLine();
    if (leg.isVoicemail) {
      if (c.voicemailAction === 'leave_message' && c.voicemailMessage.trim()) {
        await say(c.voicemailMessage, { interruptible: false });
      }
      checkLine();
      throw new CallOver('voicemail', 'assistant');
    }

    await say(config.openingLine);
    let silences = 0;
    let turnIndex = 0;
    for (;;) {
      checkLine();
      if (clock.now() >= maxEndAt) await finish(closing, 'max_duration');
      const timeoutMs = Math.min(c.silenceTimeoutSec * 1000, maxEndAt - clock.now());
      meter.pause();
      const heard: Utterance | null = await leg.listen({ timeoutMs });
      meter.resume();
      checkLine();
      turnIndex++;

      if (!heard) {
        if (clock.now() >= maxEndAt) await finish(closing, 'max_duration');
        silences++;
        if (silences > c.maxSilenceReprompts) await finish(closing, 'silence');
        await say(line(c.silenceReprompt, DEFAULTS.silenceReprompt));
        overheadMs.push(meter.take());
        continue;
      }
      silences = 0;
      await emit({
        speaker: 'callee',
        text: heard.text,
        dtmf: heard.dtmf,
        startMs: offset(heard.startedAt),
        endMs: offset(heard.endedAt),
        interrupted: false,
        latency: null,
        segments: [],
      });
      const utterance = heard.text.trim() || (heard.dtmf ? `（客户按键：${heard.dtmf}）` : '');

      // Latencies are real elapsed time, not the clock's: on a simulated clock the brain and the
      // retrieval still do real work, and that is what the latency waterfall should show.
      const heardAt = performance.now();
      meter.pause();
      const lookup = heard.text.trim() ? await deps.retrieve(heard.text) : null;
      meter.resume();
      const retrievalMs = elapsedSince(heardAt);
      checkLine();

      const brainStart = performance.now();
      let firstTokenAt: number | null = null;
      let reply = '';
      const actions: { action: BrainAction; detail: string }[] = [];
      let turnGrade: IntentGrade | null = null;
      const goodbyeHeard = c.endCallPhrases.some((phrase) => heard.text.includes(phrase));
      // A leg that streams speaks each sentence as soon as the brain completes it, while the
      // brain writes the rest; the others get the whole reply at the end, as the simulator needs.
      const sentences = leg.sayStream ? new ReplyQueue() : null;
      const cutter = new SentenceCutter();
      // Assigned from the closure below, so kept in an object TypeScript does not narrow to null.
      const out: { speaking: Promise<StreamedPlayResult> | null; firstSentenceAt: number | null } = {
        speaking: null,
        firstSentenceAt: null,
      };
      const speakSentence = (sentence: string) => {
        if (!sentences || !leg.sayStream) return;
        out.firstSentenceAt ??= performance.now();
        meter.pause();
        out.speaking ??= leg.sayStream(sentences, {
          interruptible: c.allowInterrupt && !goodbyeHeard,
          speed: config.voice.speed,
        });
        meter.resume();
        sentences.push(sentence);
      };
      let optingOut: Promise<void> | null = null;
      // The call's abort stops the brain; so does the turn's own budget, without ending the call.
      const turnAbort = new AbortController();
      const stopTurn = () => turnAbort.abort(brainAbort.signal.reason);
      brainAbort.signal.addEventListener('abort', stopTurn, { once: true });
      /** Why the brain gave no reply this turn (timeout, provider error); the turn records it. */
      const brainFailure: { reason: string | null } = { reason: null };
      const budgetMs = deps.brainSilenceBudgetMs ?? BRAIN_SILENCE_BUDGET_MS;
      let budget: NodeJS.Timeout | undefined;
      const armBudget = () => {
        clearTimeout(budget);
        budget = setTimeout(() => {
          brainFailure.reason = `模型服务 ${Math.round(budgetMs / 100) / 10} 秒内未${firstTokenAt === null ? '开始回答' : '继续回答'}`;
          turnAbort.abort(new Error('brain silence budget'));
        }, budgetMs);
      };
      armBudget();
      const stream = brain.turn({
        config,
        history: [...history],
        utterance,
        knowledge: lookup?.segments ?? [],
        knowledgeVerdict: lookup
          ? { verdict: lookup.verdict, confidence: lookup.confidence, threshold: lookup.threshold }
          : null,
        turnIndex,
        signal: turnAbort.signal,
      });
      meter.pause();
      try {
        for await (const event of stream) {
          meter.resume();
          if (turnAbort.signal.aborted) break;
          armBudget();
          if (event.type === 'delta') {
            firstTokenAt ??= performance.now();
            reply += event.text;
            if (sentences) for (const sentence of cutter.push(event.text)) speakSentence(sentence);
          } else if (event.type === 'action') {
            actions.push({ action: event.action, detail: event.detail });
            actionsSeen.push({ ...event, at: clock.now() });
            // Recorded as soon as the brain says so, whatever the line does next: a callee who
            // hangs up during the goodbye has still opted out.
            if (event.action === 'opt_out') optingOut ??= deps.optOut(input.remoteNumber, event.detail);
          } else {
            turnGrade = event.grade;
            liveGrade = strongerGrade(liveGrade, { grade: event.grade, reason: event.reason });
          }
          meter.pause();
        }
        meter.resume();
        if (sentences && brainFailure.reason === null) {
          const rest = cutter.flush();
          if (rest) speakSentence(rest);
        }
      } catch (err) {
        meter.resume();
        // The call's own end (hang-up, shutdown) is handled below; a provider failing is not the
        // call's failure: the caller hears the fallback line and the conversation goes on.
        if (aborted || lineGone()) throw err;
        brainFailure.reason ??= err instanceof Error && err.message ? err.message : '模型服务出错';
      } finally {
        clearTimeout(budget);
        brainAbort.signal.removeEventListener('abort', stopTurn);
        // The leg stops waiting for sentences whatever happened to the brain.
        sentences?.end();
      }
      // A reply cut off mid-way is not said; a leg that streamed sentences already said them.
      if (brainFailure.reason !== null && !out.speaking) reply = '';
      history.push({ role: 'user', content: utterance });
      const brainMs = elapsedSince(brainStart);
      meter.pause();
      const streamed: StreamedPlayResult | null = out.speaking ? await out.speaking : null;
      if (optingOut) await optingOut;
      meter.resume();
      const fallbacks: NonNullable<TurnLatency['fallbacks']> = [];
      if (heard.fallback) fallbacks.push('recognition');
      if (streamed?.fallback) fallbacks.push('synthesis');
      if (brainFailure.reason !== null) fallbacks.push('brain');
      const latency: TurnLatency = {
        recognitionMs: heard.recognitionMs,
        retrievalMs,
        brainMs,
        firstTokenMs: firstTokenAt === null ? brainMs : Math.round((firstTokenAt - brainStart) * 10) / 10,
        synthesisMs: 0,
        ...(heard.endpointMs !== undefined ? { endpointMs: heard.endpointMs } : {}),
        ...(fallbacks.length ? { fallbacks } : {}),
        ...(brainFailure.reason !== null ? { brainError: brainFailure.reason } : {}),
        ...(lookup?.rewriteMs != null ? { rewriteMs: lookup.rewriteMs } : {}),
        ...(lookup?.rerankMs != null ? { rerankMs: lookup.rerankMs } : {}),
      };
      if (streamed && out.firstSentenceAt !== null) {
        latency.firstSentenceMs = Math.round((out.firstSentenceAt - brainStart) * 10) / 10;
        if (streamed.firstAudioMs !== undefined) latency.firstAudioMs = streamed.firstAudioMs;
        // From the caller's last voiced audio to the reply's first packet: what the caller waited.
        if (streamed.firstPlayAt !== undefined && heard.endpointMs !== undefined) {
          latency.replyStartMs = Math.max(0, streamed.firstPlayAt - heard.endedAt);
        }
      }
      const segments = turnSegments(lookup);
      const assistantTurn = { latency, segments };
      const has = (action: BrainAction) => actions.some((a) => a.action === action);
      /** The reply already went out sentence by sentence: record it as the turn that answered. */
      const streamedReply = streamed !== null && reply.trim() !== '';
      if (streamed && streamedReply) {
        await said(reply.trim(), streamed, { ...latency, synthesisMs: streamed.synthesisMs ?? 0 }, segments);
      }
      checkLine();

      if (has('opt_out')) {
        if (!optingOut) {
          const detail = actions.find((a) => a.action === 'opt_out')?.detail ?? '客户要求不再来电';
          meter.pause();
          await deps.optOut(input.remoteNumber, detail);
          meter.resume();
        }
        if (!streamedReply) {
          await say(reply.trim() ? reply : line(c.optOutReply, DEFAULTS.optOutReply), {
            ...assistantTurn,
            interruptible: false,
          });
        }
        overheadMs.push(meter.take());
        throw new CallOver('opt_out', leg.ended?.by === 'remote' ? 'callee' : 'assistant');
      }

      const wantsTransfer =
        c.transferWhen !== 'never' &&
        (has('transfer') ||
          (c.transferWhen === 'on_intent_a' && turnGrade === 'A' && c.transferNumber !== ''));
      if (wantsTransfer && input.handoff) {
        // The flow that lent the line decides where people answer (its own transfer node, with
        // busy and no-answer branches): announce it and give the caller back.
        if (!(streamedReply && has('transfer'))) {
          const transferLine =
            has('transfer') && reply.trim() ? reply : line(c.transferLine, DEFAULTS.transferLine);
          await say(transferLine, { ...assistantTurn, interruptible: false });
        }
        overheadMs.push(meter.take());
        checkLine();
        transferRequested = true;
        throw new CallOver('transferred', 'assistant');
      }
      if (wantsTransfer && c.transferNumber === '') {
        // Nobody to transfer to: the brain's "transferring you" line would be a promise we cannot keep.
        await say(line(c.fallbackReply, DEFAULTS.fallbackReply), assistantTurn);
        overheadMs.push(meter.take());
        continue;
      }
      if (wantsTransfer) {
        // A streamed reply to a transfer request already told the caller; a transfer the grade
        // triggered still needs the line that announces it.
        if (!(streamedReply && has('transfer'))) {
          const transferLine =
            has('transfer') && reply.trim() ? reply : line(c.transferLine, DEFAULTS.transferLine);
          await say(transferLine, { ...assistantTurn, interruptible: false });
        }
        overheadMs.push(meter.take());
        checkLine();
        meter.pause();
        const outcome = await leg.transfer(c.transferNumber);
        meter.resume();
        transfer = { number: c.transferNumber, at: clock.now(), ok: outcome.ok };
        meter.pause();
        await events.onTransfer?.(c.transferNumber, transfer.at, outcome.ok);
        meter.resume();
        if (outcome.ok) throw new CallOver('transferred', 'assistant');
        checkLine();
        await say(`${TRANSFER_FAILED_LINE}${line(c.fallbackReply, DEFAULTS.fallbackReply)}`);
        continue;
      }
      if (wantsTransfer === false && has('transfer')) {
        // transferWhen 'never': the brain offered a transfer the assistant does not allow.
        await say(line(c.fallbackReply, DEFAULTS.fallbackReply), assistantTurn);
        overheadMs.push(meter.take());
        continue;
      }

      const ending = has('end_call') || goodbyeHeard;
      if (!streamedReply) {
        const spoken = reply.trim() ? reply : line(c.fallbackReply, DEFAULTS.fallbackReply);
        await say(spoken, { ...assistantTurn, interruptible: !ending });
      }
      overheadMs.push(meter.take());
      if (ending) await finish(null, 'completed');
      // A model brain may not count turns: the config's limit holds whatever the brain does.
      if (turnIndex >= c.maxTurns) await finish(closing, 'completed');
    }
  } catch (err) {
    if (err instanceof CallOver) {
      result = { endReason: err.endReason, hangupBy: err.hangupBy };
    } else {
      // An abort surfaces as the brain's AbortError: report why the line went, not the error.
      result = (aborted ? lineGone() : null) ?? { endReason: 'failed', hangupBy: 'system' };
      if (!aborted) failure = err;
    }
  } finally {
    meter.pause();
    input.signal?.removeEventListener('abort', onAbort);
  }
  // A handed-off line goes back to the flow as it is (unless the platform is stopping the call).
  if (!leg.ended && (!input.handoff || aborted)) {
    try {
      await leg.hangup();
    } catch {
      // The line may already be gone; the call is over either way.
    }
  }
  return {
    endReason: result.endReason,
    hangupBy: result.hangupBy,
    endedAt: leg.ended?.at ?? clock.now(),
    turns,
    liveGrade,
    transfer,
    transferRequested,
    overheadMs,
    actions: actionsSeen,
    error: failure,
  };
}
