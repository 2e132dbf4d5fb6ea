/**
 * The `CallLeg` of a real SIP call: signalling through an `InviteSession`, audio through a
 * `MediaSession` of the media worker, ears through a VAD endpointer and a speech recogniser,
 * voice through the assistant's synthesiser resampled to 8 kHz.
 *
 * The caller's audio is forwarded for the whole call and pushed through one endpointer, so an
 * utterance that starts while the assistant speaks (barge-in) is still whole when `listen`
 * asks for it. Events queue until `listen` takes them; DTMF digits pressed in a row are joined
 * into one answer (up to `#` or a pause).
 */
import type { CallDirection } from '@callpilot/contracts';
import type { Clock } from '../../clock';
import type { SpeechRecognizer } from '../../speech/types';
import { type Endpointer, FRAME_SAMPLES, type SpeechEnd } from '../../speech/vad';
import type { MediaSession } from '../media/media-engine';
import type { CallLeg, LegEndBy, PlayResult, Utterance } from '../types';
import { formatDtmfRelay } from './dtmf-info';
import type { InviteSession } from './user-agent';

/** A pause this long after a key press ends a DTMF answer; `#` ends it at once. */
const DTMF_PAUSE_MS = 1500;
/** A key sent as SIP INFO lasts this long, and the next one follows after as long a gap. */
const INFO_KEY_MS = 160;

export interface SipLegOptions {
  id: string;
  direction: CallDirection;
  from: string;
  to: string;
  answeredAt: number;
  clock: Clock;
  session: InviteSession;
  media: MediaSession;
  endpointer: Endpointer;
  /** Text to 8 kHz speech in the assistant's voice; `speed` 1 = normal. */
  synthesize: (text: string, speed: number) => Promise<Int16Array>;
  /** Null: the project set up no recogniser; the caller is understood by keys only. */
  recognizer: SpeechRecognizer | null;
  hotwords?: string;
  /**
   * Whether the far end's SDP has telephone-event (RFC 4733); keys we send go as SIP INFO
   * otherwise. Asked at each send: a re-INVITE may change it.
   */
  telephoneEvent?: () => boolean;
  /** Blind transfer; resolves once the far end reported the outcome. */
  transfer: (number: string) => Promise<{ ok: boolean; detail?: string }>;
  /** The media session records the call to a WAV (the call's recording). */
  recordsLine?: boolean;
  onError?: (err: unknown, context: string) => void;
}

type Heard =
  | { kind: 'speech'; end: SpeechEnd; at: number }
  | { kind: 'dtmf'; digits: string; startedAt: number; endedAt: number };

export class SipCallLeg implements CallLeg {
  readonly id: string;
  readonly direction: CallDirection;
  readonly from: string;
  readonly to: string;
  readonly answeredAt: number;
  readonly isVoicemail = false;
  readonly recordsLine: boolean;
  ended: { by: LegEndBy; at: number } | null = null;
  readonly whenEnded: Promise<{ by: LegEndBy; at: number }>;

  private resolveEnded!: (end: { by: LegEndBy; at: number }) => void;
  private readonly heard: Heard[] = [];
  private wake: (() => void) | null = null;
  private playing: { interruptible: boolean; bargedIn: boolean } | null = null;
  private dtmf: { digits: string; startedAt: number; lastAt: number; timer: AbortController } | null = null;
  /** Clock time of audio position 0: maps endpointer positions to clock times. */
  private audioEpoch: number;
  private readonly hangingUp: AbortController = new AbortController();
  /** The adapter owns the line now (a bridged transfer): hangup() must not end the caller's call. */
  private handedOver = false;
  private readonly detachMedia: () => void;

  constructor(private readonly options: SipLegOptions) {
    this.id = options.id;
    this.direction = options.direction;
    this.from = options.from;
    this.to = options.to;
    this.answeredAt = options.answeredAt;
    this.recordsLine = options.recordsLine ?? false;
    this.audioEpoch = options.clock.now();
    this.whenEnded = new Promise((resolve) => {
      this.resolveEnded = resolve;
    });
    const { media, session } = options;
    const onAudio = (pcm: Int16Array) => this.onAudio(pcm);
    const onDigit = (digit: string) => this.onDigit(digit);
    const onInactive = () => {
      // The far end stopped sending RTP: the line is dead even if no BYE came (NAT, crash).
      void session.bye('Q.850;cause=41;text="RTP timeout"');
      this.end('remote');
    };
    media.on('audio', onAudio);
    media.on('dtmf', onDigit);
    media.on('inactive', onInactive);
    this.detachMedia = () => {
      media.off('audio', onAudio);
      media.off('dtmf', onDigit);
      media.off('inactive', onInactive);
    };
    void media.setForwardAudio(true).catch((err) => options.onError?.(err, 'media'));
    void session.whenEnded.then((end) => this.end(end.by));
  }

  /** SIP INFO (application/dtmf-relay) from the signalling side. */
  receiveDtmf(digit: string): void {
    this.onDigit(digit);
  }

  private end(by: LegEndBy) {
    if (this.ended) return;
    this.ended = { by, at: this.options.clock.now() };
    this.dtmf?.timer.abort();
    this.hangingUp.abort();
    // The endpointer's state lives in WASM memory, which is not garbage-collected.
    this.options.endpointer.close();
    this.notify();
    this.resolveEnded(this.ended);
  }

  private notify() {
    const wake = this.wake;
    this.wake = null;
    wake?.();
  }

  private onAudio(pcm: Int16Array) {
    // Batches still in flight from the worker when the call ended.
    if (this.ended) return;
    const { endpointer, clock } = this.options;
    // Re-anchor on every batch: the batch ends now, so position 0 was `now - position`.
    for (let offset = 0; offset + FRAME_SAMPLES <= pcm.length; offset += FRAME_SAMPLES) {
      const event = endpointer.push(pcm.subarray(offset, offset + FRAME_SAMPLES));
      if (!event) continue;
      if (event.type === 'speech_start') {
        // Without a recogniser the words would be thrown away: cutting the assistant off for
        // them would leave the caller with neither the line nor an answer. Keys still cut in.
        if (this.options.recognizer && this.playing?.interruptible && !this.playing.bargedIn) {
          this.playing.bargedIn = true;
          void this.options.media.stopPlayback().catch((err) => this.options.onError?.(err, 'barge-in'));
        }
      } else {
        this.heard.push({ kind: 'speech', end: event, at: clock.now() });
        this.notify();
      }
    }
    this.audioEpoch = clock.now() - endpointer.positionMs;
  }

  private onDigit(digit: string) {
    // Keys sent as INFO after the call handed over (the bridge relays them) or ended.
    if (this.ended) return;
    const now = this.options.clock.now();
    if (this.playing?.interruptible && !this.playing.bargedIn) {
      this.playing.bargedIn = true;
      void this.options.media.stopPlayback().catch(() => undefined);
    }
    if (!this.dtmf) {
      this.dtmf = { digits: '', startedAt: now, lastAt: now, timer: new AbortController() };
    }
    const entry = this.dtmf;
    entry.digits += digit;
    entry.lastAt = now;
    entry.timer.abort();
    if (digit === '#') return this.flushDigits();
    entry.timer = new AbortController();
    this.options.clock.sleep(DTMF_PAUSE_MS, entry.timer.signal).then(
      () => this.flushDigits(),
      () => undefined,
    );
  }

  private flushDigits() {
    const entry = this.dtmf;
    if (!entry) return;
    this.dtmf = null;
    this.heard.push({
      kind: 'dtmf',
      digits: entry.digits,
      startedAt: entry.startedAt,
      endedAt: entry.lastAt,
    });
    this.notify();
  }

  async say(text: string, options: { interruptible: boolean; speed?: number }): Promise<PlayResult> {
    const { clock, media } = this.options;
    const requested = clock.now();
    if (this.ended) return { interrupted: false, playedMs: 0, startedAt: requested, endedAt: requested };
    const pcm = await this.options.synthesize(text, options.speed ?? 1);
    const startedAt = clock.now();
    this.playing = { interruptible: options.interruptible, bargedIn: false };
    try {
      const outcome = await media.play(pcm);
      return {
        interrupted: outcome.interrupted,
        playedMs: outcome.playedMs,
        startedAt,
        endedAt: clock.now(),
        synthesisMs: startedAt - requested,
      };
    } catch (err) {
      // The media session closed under us (hang-up): what was played is unknown, report none.
      if (!this.ended) this.options.onError?.(err, 'play');
      return {
        interrupted: false,
        playedMs: 0,
        startedAt,
        endedAt: clock.now(),
        synthesisMs: startedAt - requested,
      };
    } finally {
      this.playing = null;
    }
  }

  async listen(options: { timeoutMs: number }): Promise<Utterance | null> {
    const { clock } = this.options;
    const deadline = clock.now() + options.timeoutMs;
    for (;;) {
      if (this.ended) return null;
      const next = this.heard.shift();
      if (next?.kind === 'dtmf') {
        return {
          text: '',
          dtmf: next.digits,
          startedAt: next.startedAt,
          endedAt: next.endedAt,
          recognitionMs: 0,
        };
      }
      if (next?.kind === 'speech') {
        const utterance = await this.recognise(next.end, next.at);
        if (utterance) return utterance;
        continue;
      }
      // Someone mid-sentence or mid-number at the deadline gets to finish.
      const busy = this.options.endpointer.inSpeech || this.dtmf !== null;
      const left = deadline - clock.now();
      if (left <= 0 && !busy) return null;
      const timer = new AbortController();
      await Promise.race([
        new Promise<void>((resolve) => {
          this.wake = resolve;
        }),
        clock.sleep(Math.max(left, busy ? 200 : 0), timer.signal).catch(() => undefined),
      ]);
      timer.abort();
      this.wake = null;
    }
  }

  /** Null when nothing usable was heard (no recogniser, noise, or the recogniser failed). */
  private async recognise(end: SpeechEnd, heardAt: number): Promise<Utterance | null> {
    const { recognizer, clock } = this.options;
    if (!recognizer) return null;
    const startedAt = this.audioEpoch + end.startMs;
    const endedAt = this.audioEpoch + end.endMs;
    try {
      const transcript = await recognizer.transcribe(
        { pcm: end.audio, sampleRate: 8000 },
        { language: 'zh', prompt: this.options.hotwords, signal: this.hangingUp.signal },
      );
      if (!transcript.text.trim()) return null;
      return { text: transcript.text, dtmf: null, startedAt, endedAt, recognitionMs: clock.now() - heardAt };
    } catch (err) {
      if (!this.ended) this.options.onError?.(err, 'speech_recognition');
      return null;
    }
  }

  async sendDtmf(digits: string): Promise<void> {
    if (this.ended) return;
    if (this.options.telephoneEvent?.() ?? true) {
      await this.options.media.sendDtmf(digits);
      return;
    }
    // Every key checked before the first goes out: a bad one must not leave half a number sent.
    const keys = [...digits].map((digit) => formatDtmfRelay(digit, INFO_KEY_MS));
    for (const [index, key] of keys.entries()) {
      if (this.ended) return;
      // One at a time, each after the last one's answer, so they cannot arrive out of order.
      const response = await this.options.session.send('INFO', {
        body: Buffer.from(key.body),
        contentType: key.contentType,
      });
      if (response.status >= 300) {
        throw new Error(`key refused by the far end: SIP INFO got ${response.status} ${response.reason}`);
      }
      if (index < keys.length - 1) await this.options.clock.sleep(INFO_KEY_MS);
    }
  }

  /** Puts the far end on hold (our SDP turns sendonly) or takes it off; false when it refused. */
  async hold(on: boolean): Promise<boolean> {
    if (this.ended) return false;
    const outcome = on ? await this.options.session.hold() : await this.options.session.unhold();
    return outcome.ok;
  }

  transfer(number: string): Promise<{ ok: boolean; detail?: string }> {
    if (this.ended) return Promise.resolve({ ok: false, detail: '通话已结束' });
    return this.options.transfer(number);
  }

  /**
   * The adapter took the line over: a transfer bridged the caller to a second leg. The media and
   * the dialog stay up for the bridge; the assistant's hangup() from now on ends only this leg
   * (whenEnded resolves, so the call record ends at the transfer) and sends no BYE.
   */
  handOver(): void {
    this.handedOver = true;
    this.detachMedia();
  }

  async hangup(): Promise<void> {
    if (this.ended) return;
    this.end('local');
    if (this.handedOver) return;
    await this.options.session.bye();
  }
}
