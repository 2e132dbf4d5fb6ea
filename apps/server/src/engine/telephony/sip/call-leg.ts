/**
 * The `CallLeg` of a real SIP call: signalling through an `InviteSession`, audio through a
 * `MediaSession` of the media worker, ears through a VAD endpointer and a speech recogniser,
 * voice through the assistant's synthesiser resampled to 8 kHz.
 *
 * The caller's audio is forwarded for the whole call and pushed through one endpointer, so an
 * utterance that starts while the assistant speaks (barge-in) is still whole when `listen`
 * asks for it. Events queue until `listen` takes them; DTMF digits pressed in a row are joined
 * into one answer (up to `#`, a pause, or as many keys as a listen asks for: an IVR menu's one).
 * A flow hands the line to an assistant with its own voice and ears (`useMedia`).
 *
 * A recogniser that streams (`openSession`) hears each utterance while it is spoken: a session
 * opens at the VAD's speech start, with the audio just before it, and is finished at speech end,
 * so the final transcript costs the vendor's last decode, not a replay of the whole utterance.
 */
import type { CallDirection } from '@callpilot/contracts';
import { ProviderError } from '../../brain/openai-client';
import type { Clock } from '../../clock';
import type { SentenceAudio } from '../../speech/fallback';
import type { RecognitionSession, SpeechRecognizer, Transcript } from '../../speech/types';
import { type Endpointer, FRAME_MS, FRAME_SAMPLES, type SpeechEnd } from '../../speech/vad';
import type { MediaSession } from '../media/media-engine';
import type { PlayOutcome } from '../media/protocol';
import type {
  CallLeg,
  LegEndBy,
  LegMedia,
  PlayResult,
  StreamedPlayResult,
  TransferFailure,
  Utterance,
} from '../types';
import { formatDtmfRelay } from './dtmf-info';
import type { InviteSession } from './user-agent';

/** A pause this long after a key press ends a DTMF answer; `#` ends it at once. */
const DTMF_PAUSE_MS = 1500;
/** A key sent as SIP INFO lasts this long, and the next one follows after as long a gap. */
const INFO_KEY_MS = 160;
/**
 * Audio a streaming session gets from before the VAD's onset, as the endpointer's default pre-roll
 * keeps for `transcribe`: the first consonant is quiet and would be lost.
 */
const STREAM_PRE_ROLL_FRAMES = 10;
/**
 * Frames the leg keeps to replay at speech start: the pre-roll plus the VAD's start window (8
 * frames by default), with room for a slower `speechMs`.
 */
const STREAM_HISTORY_FRAMES = 40;
/**
 * End of turn without the VAD's full hang (700 ms): this much silence, after a streaming partial
 * that has stopped changing for as long and ends like a finished sentence (the vendor's
 * punctuation), is the caller done. A pause mid-thought has no full stop, so it still waits.
 */
export const EARLY_END_SILENCE_MS = 300;
const FINISHED_SENTENCE = /[。？！?!]$/;

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
  /** One sentence streamed as it is synthesised (with the fallback voice behind it). */
  speakSentence?: (text: string, speed: number, signal: AbortSignal) => SentenceAudio;
  /** Null: the project set up no recogniser; the caller is understood by keys only. */
  recognizer: SpeechRecognizer | null;
  hotwords?: string;
  /**
   * Whether the far end's SDP has telephone-event (RFC 4733); keys we send go as SIP INFO
   * otherwise. Asked at each send: a re-INVITE may change it.
   */
  telephoneEvent?: () => boolean;
  /** Blind transfer; resolves once the far end reported the outcome. */
  transfer: (
    number: string,
    options?: { callerId?: string; ringTimeoutMs?: number },
  ) => Promise<{ ok: boolean; detail?: string; outcome?: TransferFailure }>;
  /** The media session records the call to a WAV (the call's recording). */
  recordsLine?: boolean;
  onError?: (err: unknown, context: string) => void;
  /** A streaming recogniser revised the text of the utterance being spoken. */
  onPartial?: (text: string) => void;
  /** Silence that ends a turn early on a stable, finished partial; 0 turns it off. Default 300. */
  earlyEndSilenceMs?: number;
}

/** How a streaming session ended, and when (clock time): the final's latency is measured from it. */
type StreamFinal = { transcript: Transcript; at: number } | { error: unknown; at: number };

/** A streaming recognition of the utterance in progress. */
interface Stream {
  session: RecognitionSession;
  partial: string;
  /** Endpointer position (ms of audio) when the partial last changed. */
  partialAtMs: number;
}

type Heard =
  | { kind: 'speech'; end: SpeechEnd; at: number; final?: Promise<StreamFinal> }
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
  /** `stop` cancels a streamed reply's pending synthesis at barge-in. */
  private playing: { interruptible: boolean; bargedIn: boolean; stop?: AbortController } | null = null;
  private dtmf: { digits: string; startedAt: number; lastAt: number; timer: AbortController } | null = null;
  /** Clock time of audio position 0: maps endpointer positions to clock times. */
  private audioEpoch: number;
  private readonly hangingUp: AbortController = new AbortController();
  /** The adapter owns the line now (a bridged transfer): hangup() must not end the caller's call. */
  private handedOver = false;
  private readonly detachMedia: () => void;
  /** The session hearing the utterance in progress; null between utterances or without streaming. */
  private stream: Stream | null = null;
  /** Sessions finished but not yet answered: hang-up must close their sockets too. */
  private readonly finishing = new Set<RecognitionSession>();
  /** The last frames pushed, by frame number modulo its length; null without a streaming recogniser. */
  private history: Int16Array | null;
  private lastPartialText = '';
  /** The voice and ears in use: the options' until `useMedia` swaps them (a flow's assistant node). */
  private speech: LegMedia;
  /** While a listen asks for at most this many keys, the key answer ends at that many. */
  private keyLimit: number | undefined;

  constructor(private readonly options: SipLegOptions) {
    this.id = options.id;
    this.direction = options.direction;
    this.from = options.from;
    this.to = options.to;
    this.answeredAt = options.answeredAt;
    this.recordsLine = options.recordsLine ?? false;
    this.audioEpoch = options.clock.now();
    this.speech = {
      synthesize: options.synthesize,
      speakSentence: options.speakSentence,
      recognizer: options.recognizer,
      hotwords: options.hotwords,
    };
    this.history = options.recognizer?.openSession
      ? new Int16Array(STREAM_HISTORY_FRAMES * FRAME_SAMPLES)
      : null;
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

  /**
   * The streaming recogniser's latest text for the utterance being spoken, or of the last one
   * until the next starts; empty without a streaming recogniser.
   */
  get partial(): string {
    return this.lastPartialText;
  }

  /** SIP INFO (application/dtmf-relay) from the signalling side. */
  receiveDtmf(digit: string): void {
    this.onDigit(digit);
  }

  /**
   * Speaks and listens with `media` from now on (an IVR flow handing the caller to an assistant
   * with its own voice and recogniser). An utterance being heard finishes with the recogniser
   * that started it.
   */
  useMedia(media: LegMedia): void {
    this.speech = { ...media };
    if (media.recognizer?.openSession && !this.history) {
      this.history = new Int16Array(STREAM_HISTORY_FRAMES * FRAME_SAMPLES);
    }
  }

  private end(by: LegEndBy) {
    if (this.ended) return;
    this.ended = { by, at: this.options.clock.now() };
    this.dtmf?.timer.abort();
    this.hangingUp.abort();
    // Nobody will ask for these transcripts: free the vendor's connections now.
    this.stream?.session.abort();
    this.stream = null;
    for (const session of this.finishing) session.abort();
    this.finishing.clear();
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
      const frame = pcm.subarray(offset, offset + FRAME_SAMPLES);
      const index = endpointer.positionMs / FRAME_MS;
      this.history?.set(frame, (index % STREAM_HISTORY_FRAMES) * FRAME_SAMPLES);
      const event = endpointer.push(frame);
      // The worker sends each batch in a message of its own, so the frame is not reused under the
      // session (unlike the history, which write() gets copies of).
      if (this.stream && event?.type !== 'speech_start') this.stream.session.write(frame);
      const early = event ? null : this.earlyEnd();
      if (early) {
        this.endUtterance(early);
        continue;
      }
      if (!event) continue;
      if (event.type === 'speech_start') {
        this.openStream(event.startMs, event.atMs);
        // Without a recogniser the words would be thrown away: cutting the assistant off for
        // them would leave the caller with neither the line nor an answer. Keys still cut in.
        if (this.speech.recognizer && this.playing?.interruptible && !this.playing.bargedIn) {
          this.playing.bargedIn = true;
          this.playing.stop?.abort();
          void this.options.media.stopPlayback().catch((err) => this.options.onError?.(err, 'barge-in'));
        }
      } else {
        this.endUtterance(event);
      }
    }
    this.audioEpoch = clock.now() - endpointer.positionMs;
  }

  private endUtterance(event: SpeechEnd) {
    const final = this.stream ? this.finishStream(this.stream) : undefined;
    this.stream = null;
    this.heard.push({ kind: 'speech', end: event, at: this.options.clock.now(), final });
    this.notify();
  }

  /** The utterance ended by the recogniser's stable, finished text, before the VAD's hang. */
  private earlyEnd(): SpeechEnd | null {
    const stream = this.stream;
    const silenceMs = this.options.earlyEndSilenceMs ?? EARLY_END_SILENCE_MS;
    if (!stream || silenceMs <= 0) return null;
    const { endpointer } = this.options;
    if (endpointer.silenceMs < silenceMs) return null;
    if (endpointer.positionMs - stream.partialAtMs < silenceMs) return null;
    if (!FINISHED_SENTENCE.test(stream.partial.trim())) return null;
    return endpointer.endEarly();
  }

  /** Opens a streaming session for the utterance that started, fed the audio since its pre-roll. */
  private openStream(startMs: number, atMs: number) {
    const { recognizer } = this.speech;
    const history = this.history;
    if (!recognizer?.openSession || !history) return;
    let session: RecognitionSession;
    try {
      session = recognizer.openSession({
        language: 'zh',
        prompt: this.speech.hotwords,
        signal: this.hangingUp.signal,
      });
    } catch (err) {
      // The utterance is still buffered by the endpointer: transcribe() takes it at speech end.
      this.options.onError?.(err, 'speech_recognition');
      return;
    }
    const stream: Stream = { session, partial: '', partialAtMs: this.options.endpointer.positionMs };
    this.stream = stream;
    this.lastPartialText = '';
    session.onPartial((text) => {
      if (text !== stream.partial) stream.partialAtMs = this.options.endpointer.positionMs;
      stream.partial = text;
      // A late revision of an earlier utterance must not overwrite the one being spoken.
      if (this.stream !== stream && this.stream !== null) return;
      this.lastPartialText = text;
      this.options.onPartial?.(text);
    });
    const end = atMs / FRAME_MS;
    const from = Math.max(0, startMs / FRAME_MS - STREAM_PRE_ROLL_FRAMES, end - STREAM_HISTORY_FRAMES);
    for (let frame = from; frame < end; frame++) {
      const at = (frame % STREAM_HISTORY_FRAMES) * FRAME_SAMPLES;
      session.write(history.slice(at, at + FRAME_SAMPLES));
    }
  }

  /**
   * Ends the stream at the VAD's speech end, at once rather than when `listen` asks: the vendor
   * decodes its last audio while the assistant finishes whatever it was saying.
   */
  private finishStream(stream: Stream): Promise<StreamFinal> {
    const { session } = stream;
    const { clock } = this.options;
    this.finishing.add(session);
    let finishing: Promise<Transcript>;
    try {
      finishing = session.finish();
    } catch (err) {
      finishing = Promise.reject(err);
    }
    return finishing
      .then(
        (transcript) => ({ transcript, at: clock.now() }),
        (error: unknown) => ({ error, at: clock.now() }),
      )
      .finally(() => this.finishing.delete(session));
  }

  private onDigit(digit: string) {
    // Keys sent as INFO after the call handed over (the bridge relays them) or ended.
    if (this.ended) return;
    const now = this.options.clock.now();
    if (this.playing?.interruptible && !this.playing.bargedIn) {
      this.playing.bargedIn = true;
      this.playing.stop?.abort();
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
    // A menu waiting for one key reacts to it at once, not after the pause that ends a number.
    if (this.keyLimit !== undefined && entry.digits.length >= this.keyLimit) return this.flushDigits();
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
    const requested = this.options.clock.now();
    if (this.ended) return { interrupted: false, playedMs: 0, startedAt: requested, endedAt: requested };
    const pcm = await this.speech.synthesize(text, options.speed ?? 1);
    return this.play(pcm, options.interruptible, requested);
  }

  /** Plays recorded audio (an IVR prompt uploaded as a file): cut short like a line, by voice or keys. */
  async playAudio(pcm: Int16Array, options: { interruptible: boolean }): Promise<PlayResult> {
    const requested = this.options.clock.now();
    if (this.ended) return { interrupted: false, playedMs: 0, startedAt: requested, endedAt: requested };
    return this.play(pcm, options.interruptible, requested);
  }

  private async play(pcm: Int16Array, interruptible: boolean, requested: number): Promise<PlayResult> {
    const { clock, media } = this.options;
    const startedAt = clock.now();
    this.playing = { interruptible, bargedIn: false };
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

  async sayStream(
    sentences: AsyncIterable<string>,
    options: { interruptible: boolean; speed?: number },
  ): Promise<StreamedPlayResult> {
    const { clock, media } = this.options;
    const requested = clock.now();
    const speed = options.speed ?? 1;
    const stop = new AbortController();
    const onHangup = () => stop.abort();
    this.hangingUp.signal.addEventListener('abort', onHangup, { once: true });
    if (this.ended) stop.abort();
    const { speakSentence, synthesize } = this.speech;
    const speak =
      speakSentence ?? ((text: string, rate: number) => wholeSentence(() => synthesize(text, rate)));
    this.playing = { interruptible: options.interruptible, bargedIn: false, stop };
    const playing = this.playing;

    // Sentences are synthesised as they arrive, ahead of playback: sentence two renders while
    // sentence one plays, so the only wait the caller hears is the first sentence's first audio.
    const queued: { text: string; audio: Prefetched }[] = [];
    let inputDone = false;
    let wakePlayer: (() => void) | null = null;
    const wake = () => {
      const resume = wakePlayer;
      wakePlayer = null;
      resume?.();
    };
    stop.signal.addEventListener('abort', wake, { once: true });
    const reading = (async () => {
      try {
        for await (const text of sentences) {
          if (stop.signal.aborted) break;
          queued.push({ text, audio: prefetch(speak(text, speed, stop.signal), clock) });
          wake();
        }
      } finally {
        inputDone = true;
        wake();
      }
    })();
    reading.catch((err) => this.options.onError?.(err, 'reply'));

    const spoken: string[] = [];
    const plays: Promise<PlayOutcome>[] = [];
    let firstAudioMs: number | undefined;
    let firstPlayAt: number | undefined;
    let fallback = false;
    let next = 0;
    try {
      while (!stop.signal.aborted) {
        if (next >= queued.length) {
          if (inputDone) break;
          await new Promise<void>((resolve) => {
            wakePlayer = resolve;
          });
          continue;
        }
        const item = queued[next++]!;
        const framer = new Framer();
        let started = false;
        try {
          for await (const chunk of item.audio) {
            if (stop.signal.aborted) break;
            if (!started) {
              started = true;
              spoken.push(item.text);
              if (firstAudioMs === undefined && item.audio.firstChunkAt !== null) {
                firstAudioMs = item.audio.firstChunkAt - item.audio.startedAt;
              }
            }
            const aligned = framer.push(chunk);
            if (aligned.length === 0) continue;
            firstPlayAt ??= clock.now();
            plays.push(media.play(aligned));
          }
          const rest = framer.flush();
          if (rest.length > 0 && !stop.signal.aborted) plays.push(media.play(rest));
        } catch (err) {
          // Neither voice could say it: the caller misses one sentence, not the reply.
          if (!this.ended && !stop.signal.aborted) this.options.onError?.(err, 'speech_synthesis');
        }
        if (item.audio.fallback) fallback = true;
      }
      let outcomes: PlayOutcome[] = [];
      try {
        outcomes = await Promise.all(plays);
      } catch (err) {
        if (!this.ended) this.options.onError?.(err, 'play');
      }
      const startedAt = firstPlayAt ?? clock.now();
      return {
        text: spoken.join(''),
        interrupted: playing.bargedIn || outcomes.some((outcome) => outcome.interrupted),
        playedMs: outcomes.reduce((sum, outcome) => sum + outcome.playedMs, 0),
        startedAt,
        endedAt: clock.now(),
        synthesisMs: startedAt - requested,
        firstAudioMs,
        firstPlayAt,
        fallback,
      };
    } finally {
      stop.abort();
      this.hangingUp.signal.removeEventListener('abort', onHangup);
      if (this.playing === playing) this.playing = null;
    }
  }

  async listen(options: { timeoutMs: number; maxDigits?: number }): Promise<Utterance | null> {
    this.keyLimit = options.maxDigits;
    try {
      return await this.nextUtterance(options.timeoutMs, options.maxDigits);
    } finally {
      this.keyLimit = undefined;
    }
  }

  private async nextUtterance(timeoutMs: number, maxDigits: number | undefined): Promise<Utterance | null> {
    const { clock } = this.options;
    const deadline = clock.now() + timeoutMs;
    // Keys pressed over the prompt may already make a whole answer.
    if (maxDigits !== undefined && this.dtmf && this.dtmf.digits.length >= maxDigits) this.flushDigits();
    for (;;) {
      if (this.ended) return null;
      const next = this.heard.shift();
      if (next?.kind === 'dtmf') {
        let digits = next.digits;
        if (maxDigits !== undefined && digits.length > maxDigits) {
          // Typed ahead in one go: the rest is the next answer.
          this.heard.unshift({ ...next, digits: digits.slice(maxDigits) });
          digits = digits.slice(0, maxDigits);
        }
        return {
          text: '',
          dtmf: digits,
          startedAt: next.startedAt,
          endedAt: next.endedAt,
          recognitionMs: 0,
        };
      }
      if (next?.kind === 'speech') {
        const utterance = await this.recognise(next.end, next.at, next.final);
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
  private async recognise(
    end: SpeechEnd,
    heardAt: number,
    streamed: Promise<StreamFinal> | undefined,
  ): Promise<Utterance | null> {
    const { clock } = this.options;
    const { recognizer } = this.speech;
    if (!recognizer) return null;
    const startedAt = this.audioEpoch + end.startMs;
    const endedAt = this.audioEpoch + end.endMs;
    const endpointMs = Math.max(0, end.atMs - end.endMs);
    if (streamed) {
      const final = await streamed;
      if (this.ended) return null;
      if ('transcript' in final) {
        // An empty final: the VAD started on noise (a cough, the line), not words.
        if (!final.transcript.text.trim()) return null;
        // From the VAD's end decision to the final, not to whenever listen() came for it.
        return {
          text: final.transcript.text,
          dtmf: null,
          startedAt,
          endedAt,
          recognitionMs: final.at - heardAt,
          endpointMs,
          fallback: final.transcript.fallback,
        };
      }
      this.options.onError?.(final.error, 'speech_recognition');
      // A session reports a failure only through finish(), so "failed before finish" is told
      // apart by its kind: a timeout is the recogniser's time already spent waiting for the final,
      // and another attempt would double the caller's wait (the turn counts as silence). Anything
      // else broke the stream (a dropped connection, a server error mid-utterance): the endpointer
      // kept the whole utterance, and one transcribe() on a fresh connection recovers the turn.
      if (final.error instanceof ProviderError && final.error.kind === 'timeout') return null;
    }
    try {
      const transcript = await recognizer.transcribe(
        { pcm: end.audio, sampleRate: 8000 },
        { language: 'zh', prompt: this.speech.hotwords, signal: this.hangingUp.signal },
      );
      if (!transcript.text.trim()) return null;
      return {
        text: transcript.text,
        dtmf: null,
        startedAt,
        endedAt,
        recognitionMs: clock.now() - heardAt,
        endpointMs,
        fallback: transcript.fallback,
      };
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

  transfer(
    number: string,
    options?: { callerId?: string; ringTimeoutMs?: number },
  ): Promise<{ ok: boolean; detail?: string; outcome?: TransferFailure }> {
    if (this.ended) return Promise.resolve({ ok: false, detail: '通话已结束', outcome: 'failed' });
    return this.options.transfer(number, options);
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

/** A whole-line synthesis as a one-chunk sentence stream, for legs given no streaming voice. */
function wholeSentence(synthesize: () => Promise<Int16Array>): SentenceAudio {
  return {
    chunks: (async function* () {
      yield await synthesize();
    })(),
    fallback: false,
  };
}

/** A sentence's audio pulled from the synthesiser as fast as it comes, kept until played. */
interface Prefetched extends AsyncIterable<Int16Array> {
  readonly startedAt: number;
  /** Clock time of the first chunk; null until it came. */
  readonly firstChunkAt: number | null;
  readonly fallback: boolean;
}

function prefetch(audio: SentenceAudio, clock: Clock): Prefetched {
  const chunks: Int16Array[] = [];
  let done = false;
  let failure: { error: unknown } | null = null;
  const waiting: { wake: (() => void) | null } = { wake: null };
  const state = { startedAt: clock.now(), firstChunkAt: null as number | null };
  void (async () => {
    try {
      for await (const chunk of audio.chunks) {
        state.firstChunkAt ??= clock.now();
        chunks.push(chunk);
        waiting.wake?.();
      }
    } catch (error) {
      failure = { error };
    } finally {
      done = true;
      waiting.wake?.();
    }
  })();
  return {
    get startedAt() {
      return state.startedAt;
    },
    get firstChunkAt() {
      return state.firstChunkAt;
    },
    get fallback() {
      return audio.fallback;
    },
    async *[Symbol.asyncIterator]() {
      let at = 0;
      for (;;) {
        if (at < chunks.length) {
          yield chunks[at++]!;
          continue;
        }
        if (failure) throw failure.error;
        if (done) return;
        await new Promise<void>((resolve) => {
          waiting.wake = resolve;
        });
        waiting.wake = null;
      }
    },
  };
}

/**
 * Cuts a vendor's chunks into whole 20 ms frames: the media session pads each play() to a
 * frame boundary, so odd-sized chunks would put a click of silence between them.
 */
class Framer {
  private carry = new Int16Array(0);
  push(chunk: Int16Array): Int16Array {
    const all = this.carry.length === 0 ? chunk : concat(this.carry, chunk);
    const whole = all.length - (all.length % FRAME_SAMPLES);
    this.carry = all.slice(whole);
    // A copy: a view would send its whole backing buffer (often a pooled slab) to the worker.
    return all.slice(0, whole);
  }
  flush(): Int16Array {
    const rest = this.carry;
    this.carry = new Int16Array(0);
    return rest;
  }
}

function concat(a: Int16Array, b: Int16Array): Int16Array {
  const out = new Int16Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}
