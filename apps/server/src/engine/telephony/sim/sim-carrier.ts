import type { CallDirection, SimPersona } from '@callpilot/contracts';
import type { Clock } from '../../clock';
import type {
  CallLeg,
  InboundOffer,
  LegEndBy,
  OriginateRequest,
  OriginateResult,
  PlayResult,
  TelephonyAdapter,
  TransferFailure,
  UnansweredOutcome,
  Utterance,
} from '../types';
import {
  DEFAULT_PERSONA_MIX,
  isTalkingPersona,
  SimCallee,
  speechDurationMs,
  TALKING_PERSONAS,
} from './personas';
import { Random } from './random';

export const DEFAULT_RING_TIMEOUT_MS = 45_000;
/** The assistant's synthesised speech rate at speed 1. */
const ASSISTANT_CHARS_PER_SECOND = 4.5;
/** Voice activity detection needs a moment of the callee's speech before the line is cut. */
const BARGE_IN_DETECTION_MS = 300;
const DTMF_DIGIT_MS = 300;
/** A scripted caller's pause before pressing or answering (never past half the wait). */
const SCRIPT_THINK_MS: [number, number] = [500, 1500];
/** What a scripted caller says to hang up. */
export const SCRIPT_HANGUP = '挂机';
const SCRIPT_DIGITS = /^[0-9*#]+$/;

/**
 * Why a transfer fails, as `transferFails` answers it: true is nobody picking up (the desk's
 * usual failure), false a transfer that connects.
 */
export type SimTransferFailure = boolean | TransferFailure;

const TRANSFER_FAILURE_DETAIL: Record<TransferFailure, string> = {
  busy: '人工坐席忙线',
  no_answer: '人工坐席无人接听',
  failed: '转接失败：人工坐席未接通',
};

export interface SimCarrierOptions {
  clock: Clock;
  /** Same seed and call id → same outcome, timing and words, whatever else runs concurrently. */
  seed: number | string;
  /** Who answers when originate() names no persona (a task's contacts); default: a realistic mix. */
  personaFor?: (to: string) => SimPersona | undefined;
  /** Questions the asks_question persona picks from, e.g. a knowledge base's FAQ questions. */
  questions?: readonly string[];
  ringTimeoutMs?: number;
  /**
   * A transfer to a number for which this returns true fails (nobody at the human desk), or
   * fails the way it names (busy, no_answer, failed: an IVR flow branches on it).
   */
  transferFails?: (number: string) => SimTransferFailure;
}

const NOT_RINGING: readonly Ring['outcome'][] = ['busy', 'powered_off', 'vacant'];

interface Ring {
  outcome: UnansweredOutcome | 'answered' | 'voicemail';
  ringMs: number;
}

/** Ring time and outcome of a persona: carriers report busy, vacant and powered off within seconds. */
function ringFor(persona: SimPersona, rng: Random, timeoutMs: number): Ring {
  switch (persona) {
    case 'busy':
      return { outcome: 'busy', ringMs: rng.int(1000, 3000) };
    case 'powered_off':
      return { outcome: 'powered_off', ringMs: rng.int(1500, 5000) };
    case 'vacant':
      return { outcome: 'vacant', ringMs: rng.int(1000, 4000) };
    case 'rejected':
      // A few rings (about 5 s each) before the callee presses 拒接.
      return { outcome: 'rejected', ringMs: rng.int(6000, 15000) };
    case 'no_answer':
      return { outcome: 'no_answer', ringMs: timeoutMs };
    case 'voicemail':
      return { outcome: 'voicemail', ringMs: rng.int(20000, 30000) };
    default:
      return { outcome: 'answered', ringMs: rng.int(3000, 15000) };
  }
}

interface PendingUtterance extends Utterance {
  /** Clock time the recogniser delivers it. */
  readyAt: number;
}

/** A DTMF press or recognised speech the simulated callee will deliver to listen(). */
export interface SimLegInit {
  id: string;
  direction: CallDirection;
  from: string;
  to: string;
  persona: SimPersona;
  clock: Clock;
  rng: Random;
  questions: readonly string[];
  transferFails: (number: string) => SimTransferFailure;
  /**
   * What the caller does at each listen, in order (a 模拟来电 of a flow): digits are keys, '' is
   * silence, '挂机' hangs up, anything else is said. The persona takes over once it is used up.
   */
  script?: readonly string[];
  onEnd: (leg: SimLeg) => void;
}

/**
 * An answered simulated call. The callee lives on the clock: its words become available to
 * listen() at (line end + think time + speaking time + recognition latency), and every wait races
 * the callee hanging up, so a leg behaves like a phone line seen through ASR.
 */
export class SimLeg implements CallLeg {
  readonly id: string;
  readonly direction: CallDirection;
  readonly from: string;
  readonly to: string;
  readonly answeredAt: number;
  readonly isVoicemail: boolean;
  readonly persona: SimPersona;
  /** Digits the assistant sent and the number a transfer bridged to (for tests and the record). */
  readonly sentDtmf: string[] = [];
  transferredTo: string | null = null;
  /** The number the human saw, when the transfer named one. */
  transferCallerId: string | null = null;
  readonly whenEnded: Promise<{ by: LegEndBy; at: number }>;
  private endedState: { by: LegEndBy; at: number } | null = null;
  private resolveEnded!: (value: { by: LegEndBy; at: number }) => void;
  private pending: PendingUtterance | null = null;
  private remoteHangup: AbortController | null = null;
  private readonly callee: SimCallee;
  private readonly clock: Clock;
  private readonly rng: Random;
  private readonly script: string[];

  constructor(private readonly init: SimLegInit) {
    this.id = init.id;
    this.direction = init.direction;
    this.from = init.from;
    this.to = init.to;
    this.persona = init.persona;
    this.clock = init.clock;
    this.rng = init.rng;
    this.answeredAt = init.clock.now();
    this.isVoicemail = init.persona === 'voicemail';
    this.script = [...(init.script ?? [])];
    const calleePersona = isTalkingPersona(init.persona) ? init.persona : 'voicemail';
    this.callee = new SimCallee(calleePersona, init.rng, init.questions);
    this.whenEnded = new Promise((resolve) => {
      this.resolveEnded = resolve;
    });
  }

  get ended() {
    return this.endedState;
  }

  async say(text: string, options: { interruptible: boolean; speed?: number }): Promise<PlayResult> {
    const startedAt = this.clock.now();
    if (this.endedState)
      return { interrupted: false, playedMs: 0, startedAt, endedAt: startedAt, synthesisMs: 0 };
    const lineMs = speechDurationMs(text, ASSISTANT_CHARS_PER_SECOND * (options.speed ?? 1));
    // A new line supersedes anything the callee was about to say to the previous one.
    this.pending = null;
    if (this.script.length > 0) {
      // A scripted caller answers at the next listen, whatever the line said.
      await this.wait(lineMs);
      const endedAt = this.clock.now();
      return { interrupted: false, playedMs: endedAt - startedAt, startedAt, endedAt, synthesisMs: 0 };
    }
    const reaction = this.callee.react(text, lineMs);

    if (reaction.kind === 'hangup') this.scheduleRemoteHangup(startedAt + reaction.atMs);
    if (reaction.kind === 'speak') {
      const bargeIn =
        options.interruptible && reaction.bargeInAtMs !== null && reaction.bargeInAtMs < lineMs
          ? reaction.bargeInAtMs
          : null;
      const speakAt = bargeIn !== null ? startedAt + bargeIn : startedAt + lineMs + reaction.thinkMs;
      this.pending = this.utterance(reaction.text, reaction.dtmf, speakAt);
      if (bargeIn !== null) {
        await this.wait(bargeIn + BARGE_IN_DETECTION_MS);
        const endedAt = this.clock.now();
        return {
          interrupted: !this.endedState,
          playedMs: endedAt - startedAt,
          startedAt,
          endedAt,
          synthesisMs: 0,
        };
      }
    }
    await this.wait(lineMs);
    const endedAt = this.clock.now();
    return { interrupted: false, playedMs: endedAt - startedAt, startedAt, endedAt, synthesisMs: 0 };
  }

  async listen(options: { timeoutMs: number; maxDigits?: number }): Promise<Utterance | null> {
    if (this.endedState) return null;
    const start = this.clock.now();
    if (!this.pending && this.script.length > 0) this.pending = this.scripted(start, options);
    const pending = this.pending;
    // Silence is "nobody started speaking before the timeout"; a late talker is heard next time.
    if (!pending || pending.startedAt > start + options.timeoutMs) {
      await this.wait(options.timeoutMs);
      return null;
    }
    const [next, rest] = splitKeys(pending, options.maxDigits);
    await this.wait(next.readyAt - start);
    if (this.endedState) return null;
    // Keys typed past the answer wait for the next listen (until the next line is played).
    this.pending = rest;
    const { readyAt: _readyAt, ...utterance } = next;
    return utterance;
  }

  /** The script's next step as the utterance it makes (null: silence, or the caller hung up). */
  private scripted(now: number, options: { timeoutMs: number; maxDigits?: number }): PendingUtterance | null {
    const entry = (this.script.shift() ?? '').trim();
    const think = Math.min(this.rng.int(SCRIPT_THINK_MS[0], SCRIPT_THINK_MS[1]), options.timeoutMs / 2);
    if (entry === '') return null;
    if (entry === SCRIPT_HANGUP) {
      this.scheduleRemoteHangup(now + think);
      return null;
    }
    if (SCRIPT_DIGITS.test(entry)) return this.utterance('', entry, now + think);
    return this.utterance(entry, null, now + think);
  }

  async sendDtmf(digits: string): Promise<void> {
    this.sentDtmf.push(digits);
    await this.wait(digits.length * DTMF_DIGIT_MS);
  }

  async transfer(
    number: string,
    options: { callerId?: string; ringTimeoutMs?: number } = {},
  ): Promise<{ ok: boolean; detail?: string; outcome?: TransferFailure }> {
    if (this.endedState) return { ok: false, detail: '通话已结束', outcome: 'failed' };
    const setupMs = this.rng.int(3000, 8000);
    const fails = this.init.transferFails(number);
    const failure: TransferFailure | null = fails === true ? 'no_answer' : fails || null;
    // Nobody answering rings for as long as the caller is willing to wait.
    await this.wait(failure === 'no_answer' ? (options.ringTimeoutMs ?? setupMs) : setupMs);
    if (this.endedState) return { ok: false, detail: '客户在转接中挂断', outcome: 'failed' };
    if (failure) return { ok: false, detail: TRANSFER_FAILURE_DETAIL[failure], outcome: failure };
    this.transferredTo = number;
    this.transferCallerId = options.callerId ?? null;
    return { ok: true };
  }

  async hangup(): Promise<void> {
    this.end('local');
  }

  /** Ends the call from the far side (carrier shutdown, tests). */
  remoteHangupNow() {
    this.end('remote');
  }

  private utterance(text: string, dtmf: string | null, startedAt: number): PendingUtterance {
    const speakingMs = dtmf ? dtmf.length * DTMF_DIGIT_MS : speechDurationMs(text, this.callee.speechRate());
    const endedAt = startedAt + speakingMs;
    const recognitionMs = dtmf ? 0 : this.callee.recognitionMs();
    return { text, dtmf, startedAt, endedAt, recognitionMs, readyAt: endedAt + recognitionMs };
  }

  private scheduleRemoteHangup(at: number) {
    this.remoteHangup?.abort();
    const controller = new AbortController();
    this.remoteHangup = controller;
    this.clock.sleep(Math.max(0, at - this.clock.now()), controller.signal).then(
      () => this.end('remote'),
      () => undefined,
    );
  }

  /** Waits on the clock; returns early when the call ends. False when the call is over. */
  private async wait(ms: number): Promise<boolean> {
    if (this.endedState) return false;
    if (ms > 0) {
      const controller = new AbortController();
      await Promise.race([this.clock.sleep(ms, controller.signal).catch(() => undefined), this.whenEnded]);
      // Drop the timer when the call ended first, so a simulated clock does not jump to it.
      controller.abort();
    }
    return !this.endedState;
  }

  private end(by: LegEndBy) {
    if (this.endedState) return;
    this.endedState = { by, at: this.clock.now() };
    this.remoteHangup?.abort();
    this.remoteHangup = null;
    this.pending = null;
    this.resolveEnded(this.endedState);
    this.init.onEnd(this);
  }
}

/**
 * A key answer ends at `#` or at `maxDigits` keys, as a real line's does: the keys after it are a
 * second answer, pressed right after the first.
 */
function splitKeys(
  utterance: PendingUtterance,
  maxDigits: number | undefined,
): [PendingUtterance, PendingUtterance | null] {
  const keys = utterance.dtmf;
  if (!keys) return [utterance, null];
  const hash = keys.indexOf('#');
  const cut = Math.min(hash >= 0 ? hash + 1 : keys.length, maxDigits ?? keys.length);
  if (cut >= keys.length) return [utterance, null];
  const splitAt = utterance.startedAt + cut * DTMF_DIGIT_MS;
  return [
    { ...utterance, dtmf: keys.slice(0, cut), endedAt: splitAt, readyAt: splitAt },
    { ...utterance, dtmf: keys.slice(cut), startedAt: splitAt },
  ];
}

export interface SimCarrier extends TelephonyAdapter {
  readonly kind: 'sim';
  /**
   * A caller dials `to` from `from`: the registered inbound handlers get the offer. Resolves with
   * what the caller got: the answered leg, or the refusal they heard.
   */
  simulateInbound(request: {
    callId: string;
    from: string;
    to: string;
    persona?: SimPersona;
    questions?: readonly string[];
    /** What the caller does at each listen before the persona takes over (see SimLegInit.script). */
    script?: readonly string[];
  }): Promise<{ answered: true; leg: SimLeg } | { answered: false; cause: 'busy' | 'unavailable' }>;
  /** Legs currently up. */
  readonly activeLegs: number;
  /** The simulated callee of a live call hangs up now (the console's 挂断); false when no such leg. */
  hangUpRemote(callId: string): boolean;
}

/**
 * The built-in simulated carrier: outcomes, ring times and callees from a seeded PRNG per call
 * (seed + call id), all timed on the injected clock.
 */
export function createSimCarrier(options: SimCarrierOptions): SimCarrier {
  const { clock } = options;
  const handlers = new Set<(offer: InboundOffer) => void>();
  const live = new Set<SimLeg>();
  let closed = false;

  const newLeg = (
    id: string,
    direction: CallDirection,
    from: string,
    to: string,
    persona: SimPersona,
    rng: Random,
    questions?: readonly string[],
    script?: readonly string[],
  ) => {
    const leg = new SimLeg({
      id,
      direction,
      from,
      to,
      persona,
      clock,
      rng,
      questions: questions ?? options.questions ?? [],
      transferFails: options.transferFails ?? (() => false),
      script,
      onEnd: (ended) => live.delete(ended),
    });
    live.add(leg);
    return leg;
  };

  const choosePersona = (to: string, rng: Random, requested?: SimPersona) =>
    requested ?? options.personaFor?.(to) ?? rng.weighted(DEFAULT_PERSONA_MIX);

  return {
    kind: 'sim',

    get activeLegs() {
      return live.size;
    },

    async originate(request: OriginateRequest): Promise<OriginateResult> {
      if (closed) return { answered: false, outcome: 'failed', ringMs: 0, detail: '模拟线路已关闭' };
      const rng = new Random(`${options.seed}:${request.callId}`);
      const persona = choosePersona(request.to, rng, request.persona);
      const timeoutMs = request.ringTimeoutMs ?? options.ringTimeoutMs ?? DEFAULT_RING_TIMEOUT_MS;
      const ring = ringFor(persona, rng, timeoutMs);
      const ringMs = Math.min(ring.ringMs, timeoutMs);
      // Busy, switched off and vacant numbers are refused by the network: no phone rings.
      if (!NOT_RINGING.includes(ring.outcome)) request.onRinging?.();
      try {
        await clock.sleep(ringMs, request.signal);
      } catch {
        return { answered: false, outcome: 'failed', ringMs: 0, detail: '呼叫已取消' };
      }
      if (ring.ringMs > timeoutMs) return { answered: false, outcome: 'no_answer', ringMs };
      if (ring.outcome !== 'answered' && ring.outcome !== 'voicemail') {
        return { answered: false, outcome: ring.outcome, ringMs };
      }
      return {
        answered: true,
        leg: newLeg(request.callId, 'outbound', request.from, request.to, persona, rng, request.questions),
        ringMs,
      };
    },

    hangUpRemote(callId) {
      for (const leg of live) {
        if (leg.id !== callId) continue;
        leg.remoteHangupNow();
        return true;
      }
      return false;
    },

    simulateInbound(request) {
      const rng = new Random(`${options.seed}:${request.callId}`);
      const persona = request.persona ?? options.personaFor?.(request.from) ?? rng.pick(TALKING_PERSONAS);
      const cancelled = new AbortController();
      return new Promise((resolve) => {
        let settled = false;
        const offer: InboundOffer = {
          callId: request.callId,
          from: request.from,
          to: request.to,
          persona,
          cancelled: cancelled.signal,
          async answer() {
            if (settled || closed) throw new Error('模拟来电已结束');
            settled = true;
            const leg = newLeg(
              request.callId,
              'inbound',
              request.from,
              request.to,
              persona,
              rng,
              request.questions,
              request.script,
            );
            resolve({ answered: true, leg });
            return leg;
          },
          async reject(cause) {
            if (settled) return;
            settled = true;
            resolve({ answered: false, cause });
          },
        };
        if (closed || handlers.size === 0) {
          void offer.reject('unavailable');
          return;
        }
        for (const handler of handlers) handler(offer);
      });
    },

    onInbound(handler) {
      handlers.add(handler);
      return () => handlers.delete(handler);
    },

    async close() {
      closed = true;
      for (const leg of [...live]) leg.remoteHangupNow();
    },
  };
}
