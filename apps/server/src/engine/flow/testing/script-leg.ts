import type { Clock } from '../../clock';
import type { CallLeg, LegEndBy, PlayResult, TransferFailure, Utterance } from '../../telephony/types';

/**
 * A CallLeg for tests and the bench whose caller follows a script: one action per listen (keys,
 * words, silence, hanging up), or an action that happens during the next prompt (barge-in, a
 * hang-up while the flow speaks). Everything happens on the injected clock, so a flow that waits
 * minutes runs in microseconds on a VirtualClock and every offset is exact.
 */

export type CallerAction =
  | { kind: 'press'; digits: string; afterMs: number }
  | { kind: 'say'; text: string; afterMs: number }
  | { kind: 'silence' }
  | { kind: 'hangup'; afterMs: number }
  /**
   * Keys or words `atMs` into the next prompt, or the next one containing `during` (cutting it
   * when it is interruptible; otherwise the line buffers them for the next listen).
   */
  | { kind: 'barge'; digits: string | null; text: string; atMs: number; during?: string }
  | { kind: 'hangup_in_prompt'; atMs: number };

/** Script steps, in the caller's words. */
export const caller = {
  press: (digits: string, afterMs = 800): CallerAction => ({ kind: 'press', digits, afterMs }),
  say: (text: string, afterMs = 600): CallerAction => ({ kind: 'say', text, afterMs }),
  silence: (): CallerAction => ({ kind: 'silence' }),
  hangUp: (afterMs = 500): CallerAction => ({ kind: 'hangup', afterMs }),
  bargeIn: (digits: string, atMs = 400, during?: string): CallerAction => ({
    kind: 'barge',
    digits,
    text: '',
    atMs,
    during,
  }),
  bargeInSaying: (text: string, atMs = 400, during?: string): CallerAction => ({
    kind: 'barge',
    digits: null,
    text,
    atMs,
    during,
  }),
  hangUpDuringPrompt: (atMs = 300): CallerAction => ({ kind: 'hangup_in_prompt', atMs }),
};

/** What a transfer to the human desk gives: connected, or why not ('unknown': the line gives no reason). */
export type ScriptTransfer = 'ok' | TransferFailure | 'unknown';

export interface ScriptLegOptions {
  clock: Clock;
  script?: CallerAction[];
  id?: string;
  from?: string;
  to?: string;
  /** Outcomes of successive transfers; once used up, transfers connect. */
  transfers?: ScriptTransfer[];
  /** How long a prompt takes per character. */
  msPerChar?: number;
  /** After the last action the caller stays silent (default) or hangs up. */
  whenScriptEnds?: 'silence' | 'hangup';
}

export interface SpokenLine {
  text: string;
  interruptible: boolean;
  interrupted: boolean;
  startedAt: number;
  endedAt: number;
}

const DIGIT_MS = 150;
const SPEECH_MS_PER_CHAR = 180;
const RECOGNITION_MS = 200;

type Fired = { action: Extract<CallerAction, { kind: 'barge' }>; at: number };

export class ScriptLeg implements CallLeg {
  readonly id: string;
  readonly direction = 'inbound' as const;
  readonly from: string;
  readonly to: string;
  readonly answeredAt: number;
  readonly isVoicemail = false;
  readonly whenEnded: Promise<{ by: LegEndBy; at: number }>;
  /** Everything the flow said, played or asked, for assertions. */
  readonly spoken: SpokenLine[] = [];
  readonly listens: Array<{ timeoutMs: number; maxDigits?: number; at: number }> = [];
  readonly transfers: Array<{ number: string; callerId?: string; ringTimeoutMs?: number }> = [];
  readonly audioPlayed: number[] = [];
  readonly sentDtmf: string[] = [];
  private readonly script: CallerAction[];
  private readonly outcomes: ScriptTransfer[];
  private fired: Fired | null = null;
  private endedState: { by: LegEndBy; at: number } | null = null;
  private resolveEnded!: (value: { by: LegEndBy; at: number }) => void;
  private readonly clock: Clock;
  private readonly msPerChar: number;

  constructor(private readonly options: ScriptLegOptions) {
    this.clock = options.clock;
    this.id = options.id ?? 'script-leg';
    this.from = options.from ?? '13800138000';
    this.to = options.to ?? '4008001234';
    this.answeredAt = options.clock.now();
    this.script = [...(options.script ?? [])];
    this.outcomes = [...(options.transfers ?? [])];
    this.msPerChar = options.msPerChar ?? 200;
    this.whenEnded = new Promise((resolve) => {
      this.resolveEnded = resolve;
    });
  }

  get ended() {
    return this.endedState;
  }

  /** Script steps not used yet. */
  get remaining(): readonly CallerAction[] {
    return this.script;
  }

  say(text: string, options: { interruptible: boolean }): Promise<PlayResult> {
    return this.play(text, Math.max(200, [...text].length * this.msPerChar), options.interruptible);
  }

  async playAudio(pcm: Int16Array, options: { interruptible: boolean }): Promise<PlayResult> {
    this.audioPlayed.push(pcm.length);
    // 8 kHz mono: 8 samples a millisecond.
    return this.play('（录音）', Math.max(1, Math.round(pcm.length / 8)), options.interruptible);
  }

  private async play(text: string, lineMs: number, interruptible: boolean): Promise<PlayResult> {
    const startedAt = this.clock.now();
    const line: SpokenLine = { text, interruptible, interrupted: false, startedAt, endedAt: startedAt };
    this.spoken.push(line);
    if (this.endedState) return { interrupted: false, playedMs: 0, startedAt, endedAt: startedAt };
    const next = this.script[0];
    let playMs = lineMs;
    if (next?.kind === 'hangup_in_prompt') {
      this.script.shift();
      await this.wait(Math.min(next.atMs, lineMs));
      this.end('remote');
    } else if (next?.kind === 'barge' && !this.fired && (!next.during || text.includes(next.during))) {
      const at = Math.min(next.atMs, lineMs);
      this.fired = { action: next, at: startedAt + at };
      if (interruptible && next.atMs < lineMs) {
        playMs = next.atMs;
        line.interrupted = true;
      }
      await this.wait(playMs);
    } else {
      await this.wait(lineMs);
    }
    line.endedAt = this.clock.now();
    line.interrupted &&= !this.endedState;
    return {
      interrupted: line.interrupted,
      playedMs: line.endedAt - startedAt,
      startedAt,
      endedAt: line.endedAt,
    };
  }

  async listen(options: { timeoutMs: number; maxDigits?: number }): Promise<Utterance | null> {
    const start = this.clock.now();
    this.listens.push({ ...options, at: start });
    if (this.endedState) return null;
    const action = this.script[0];
    if (!action) {
      if (this.options.whenScriptEnds === 'hangup') {
        this.end('remote');
        return null;
      }
      await this.wait(options.timeoutMs);
      return null;
    }
    switch (action.kind) {
      case 'silence':
        this.script.shift();
        await this.wait(options.timeoutMs);
        return null;
      case 'hangup':
      case 'hangup_in_prompt': {
        this.script.shift();
        const afterMs = action.kind === 'hangup' ? action.afterMs : 0;
        if (afterMs >= options.timeoutMs) {
          await this.wait(options.timeoutMs);
          return null;
        }
        await this.wait(afterMs);
        this.end('remote');
        return null;
      }
      case 'barge': {
        this.script.shift();
        // Heard during the prompt (and buffered by the line), or now when no prompt came first.
        const at = this.fired?.action === action ? this.fired.at : start + action.atMs;
        this.fired = null;
        return this.deliver(action.digits, action.text, at, options.maxDigits);
      }
      case 'press':
      case 'say': {
        // A caller who answers after the timeout is heard at the next listen, as on a real line.
        if (action.afterMs >= options.timeoutMs) {
          await this.wait(options.timeoutMs);
          return null;
        }
        this.script.shift();
        return action.kind === 'press'
          ? this.deliver(action.digits, '', start + action.afterMs, options.maxDigits)
          : this.deliver(null, action.text, start + action.afterMs, options.maxDigits);
      }
    }
  }

  /** Keys end at `maxDigits` or `#` (the rest is the next answer); words after recognition. */
  private async deliver(
    digits: string | null,
    text: string,
    startedAt: number,
    maxDigits: number | undefined,
  ): Promise<Utterance | null> {
    if (digits !== null) {
      const hash = digits.indexOf('#');
      let cut = digits.length;
      if (maxDigits !== undefined) cut = Math.min(cut, maxDigits);
      if (hash >= 0) cut = Math.min(cut, hash + 1);
      const entry = digits.slice(0, cut);
      if (cut < digits.length) this.script.unshift({ kind: 'press', digits: digits.slice(cut), afterMs: 0 });
      const endedAt = startedAt + entry.length * DIGIT_MS;
      await this.wait(endedAt - this.clock.now());
      if (this.endedState) return null;
      return { text: '', dtmf: entry, startedAt, endedAt, recognitionMs: 0 };
    }
    const endedAt = startedAt + [...text].length * SPEECH_MS_PER_CHAR;
    await this.wait(endedAt + RECOGNITION_MS - this.clock.now());
    if (this.endedState) return null;
    return { text, dtmf: null, startedAt, endedAt, recognitionMs: RECOGNITION_MS };
  }

  async sendDtmf(digits: string): Promise<void> {
    this.sentDtmf.push(digits);
  }

  async transfer(
    number: string,
    options: { callerId?: string; ringTimeoutMs?: number } = {},
  ): Promise<{ ok: boolean; detail?: string; outcome?: TransferFailure }> {
    this.transfers.push({ number, ...options });
    if (this.endedState) return { ok: false, detail: '通话已结束' };
    const outcome = this.outcomes.shift() ?? 'ok';
    const ringMs =
      outcome === 'no_answer' ? (options.ringTimeoutMs ?? 30_000) : outcome === 'ok' ? 3000 : 800;
    await this.wait(ringMs);
    if (this.endedState) return { ok: false, detail: '客户在转接中挂断' };
    switch (outcome) {
      case 'ok':
        return { ok: true };
      case 'busy':
        return { ok: false, outcome, detail: '对方忙' };
      case 'no_answer':
        return { ok: false, outcome, detail: '无人接听' };
      case 'failed':
        return { ok: false, outcome, detail: '号码无法接通' };
      case 'unknown':
        return { ok: false, detail: '线路未返回原因' };
    }
  }

  async hangup(): Promise<void> {
    this.end('local');
  }

  /** The caller hangs up now (from a test). */
  remoteHangup() {
    this.end('remote');
  }

  private async wait(ms: number): Promise<void> {
    if (this.endedState || ms <= 0) return;
    const timer = new AbortController();
    await Promise.race([this.clock.sleep(ms, timer.signal).catch(() => undefined), this.whenEnded]);
    // Drop the timer when the call ended first, so a simulated clock does not jump to it.
    timer.abort();
  }

  private end(by: LegEndBy) {
    if (this.endedState) return;
    this.endedState = { by, at: this.clock.now() };
    this.resolveEnded(this.endedState);
  }
}
