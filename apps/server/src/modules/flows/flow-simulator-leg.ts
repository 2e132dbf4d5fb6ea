import type { FlowSimulationInput } from '@callpilot/contracts';
import type { Clock } from '../../engine/clock';
import type { CallLeg, LegEndBy, PlayResult, TransferFailure, Utterance } from '../../engine/telephony/types';

/** What the simulator leg tells its simulation as the flow runs over it. */
export interface SimulatorLegEvents {
  /** A line was spoken (text) or an uploaded prompt played (pcm at 8 kHz). */
  onPrompt(prompt: { text: string; pcm: Int16Array | null }): void;
  /** The flow is listening: the console's next input answers it. */
  onListen(timeoutMs: number): void;
}

/**
 * The line of the editor's 模拟: a CallLeg whose caller is the person at the console. Lines are
 * "played" at once (the console shows and speaks them itself), and every listen() waits for the
 * console's next input however long it takes: the 超时 button stands for the caller's silence,
 * so a node's timeout can be tried without waiting it out. Transfers always connect, and only
 * say so: nobody is dialled from a simulation.
 */
export class SimulatorLeg implements CallLeg {
  readonly direction = 'inbound' as const;
  readonly isVoicemail = false;
  readonly answeredAt: number;
  readonly whenEnded: Promise<{ by: LegEndBy; at: number }>;
  private endedState: { by: LegEndBy; at: number } | null = null;
  private resolveEnded!: (ended: { by: LegEndBy; at: number }) => void;
  private pending: ((heard: Utterance | null) => void) | null = null;
  /** The number the last transfer "connected" to. */
  transferredTo: string | null = null;

  constructor(
    readonly id: string,
    readonly from: string,
    readonly to: string,
    private readonly clock: Clock,
    private readonly events: SimulatorLegEvents,
  ) {
    this.answeredAt = clock.now();
    this.whenEnded = new Promise((resolve) => {
      this.resolveEnded = resolve;
    });
  }

  get ended() {
    return this.endedState;
  }

  /** The flow waits for the caller. */
  get listening(): boolean {
    return this.pending !== null;
  }

  private played(): PlayResult {
    const at = this.clock.now();
    return { interrupted: false, playedMs: 0, startedAt: at, endedAt: at, synthesisMs: 0 };
  }

  async say(text: string): Promise<PlayResult> {
    if (!this.endedState && text.trim()) this.events.onPrompt({ text, pcm: null });
    return this.played();
  }

  async playAudio(pcm: Int16Array): Promise<PlayResult> {
    if (!this.endedState) this.events.onPrompt({ text: '', pcm });
    return this.played();
  }

  async listen(options: { timeoutMs: number }): Promise<Utterance | null> {
    if (this.endedState) return null;
    // A second listen while one waits would orphan the first: answer it as silence.
    this.pending?.(null);
    return new Promise((resolve) => {
      this.pending = resolve;
      this.events.onListen(options.timeoutMs);
    });
  }

  /**
   * The console's input, answering the listen that waits. False when nothing listens (the flow
   * is still running); a hang-up ends the line whatever the flow is doing.
   */
  deliver(input: FlowSimulationInput): boolean {
    if (input.kind === 'hangup') {
      this.end('remote');
      return true;
    }
    const answer = this.pending;
    if (!answer || this.endedState) return false;
    this.pending = null;
    if (input.kind === 'timeout') {
      answer(null);
      return true;
    }
    const at = this.clock.now();
    answer({
      text: input.kind === 'speech' ? input.value : '',
      dtmf: input.kind === 'digits' ? input.value : null,
      startedAt: at,
      endedAt: at,
      recognitionMs: 0,
    });
    return true;
  }

  async sendDtmf(): Promise<void> {}

  async transfer(number: string): Promise<{ ok: boolean; detail?: string; outcome?: TransferFailure }> {
    if (this.endedState) return { ok: false, detail: '通话已结束', outcome: 'failed' };
    this.transferredTo = number;
    return { ok: true, detail: `（模拟）已转接至 ${number}` };
  }

  async hangup(): Promise<void> {
    this.end('local');
  }

  private end(by: LegEndBy) {
    if (this.endedState) return;
    this.endedState = { by, at: this.clock.now() };
    const waiting = this.pending;
    this.pending = null;
    waiting?.(null);
    this.resolveEnded(this.endedState);
  }
}
