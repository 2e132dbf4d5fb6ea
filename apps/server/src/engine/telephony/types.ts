import type { CallDirection, SimPersona } from '@callpilot/contracts';
import type { SentenceAudio } from '../speech/fallback';
import type { SpeechRecognizer } from '../speech/types';

/** Carrier outcomes of a call nobody answered (the contracts' end reasons of the same names). */
export type UnansweredOutcome = 'busy' | 'no_answer' | 'powered_off' | 'vacant' | 'rejected' | 'failed';

/**
 * The assistant's voice and ears on a real line (the simulated carrier passes text and needs
 * neither): its synthesiser at 8 kHz and its recogniser, null when the assistant has none.
 */
export interface LegMedia {
  /** A whole line at 8 kHz: fixed lines (opening, re-prompts, closing), cached per voice. */
  synthesize: (text: string, speed: number) => Promise<Int16Array>;
  /**
   * One sentence of a reply at 8 kHz, streamed as the vendor renders it, with the project's
   * fallback voice behind it. Absent: sentences are spoken through `synthesize`.
   */
  speakSentence?: (text: string, speed: number, signal: AbortSignal) => SentenceAudio;
  recognizer: SpeechRecognizer | null;
  /** Words the recogniser should expect (product names, knowledge titles). */
  hotwords?: string;
}

export interface OriginateRequest {
  callId: string;
  /** The project placing the call: a real line routes by its caller number's trunk. */
  projectId?: string;
  media?: LegMedia;
  from: string;
  to: string;
  /** Simulated carrier only: who picks up. Other adapters ignore it. */
  persona?: SimPersona;
  /** Simulated carrier only: what a question-asking callee asks (e.g. the assistant's FAQ questions). */
  questions?: readonly string[];
  /** Give up ringing after this long (no_answer). */
  ringTimeoutMs?: number;
  signal?: AbortSignal;
  /**
   * The carrier reports the callee's phone ringing (SIP 180/183; the simulator when its callee's
   * phone rings). Called at most once; a carrier that cannot tell never calls it.
   */
  onRinging?: () => void;
}

export type OriginateResult =
  | { answered: true; leg: CallLeg; ringMs: number }
  | { answered: false; outcome: UnansweredOutcome; ringMs: number; detail?: string };

/** What the far end said (recognised speech) or pressed (DTMF) in one turn. */
export interface Utterance {
  text: string;
  dtmf: string | null;
  /** Clock times of the callee's speech. */
  startedAt: number;
  endedAt: number;
  /** Time the recogniser took after the callee stopped speaking. */
  recognitionMs: number;
  /** Real lines: the VAD's hang between the last voiced audio and its end-of-turn decision. */
  endpointMs?: number;
  /** The project's fallback recogniser produced the text. */
  fallback?: boolean;
}

export interface PlayResult {
  /** The callee spoke over the line and it stopped early (only when interruptible). */
  interrupted: boolean;
  /** How much of the line was played. */
  playedMs: number;
  /** Clock times the line started and stopped playing. */
  startedAt: number;
  endedAt: number;
  /** Time spent synthesising the line before it started playing, when the leg knows it (0 on the sim). */
  synthesisMs?: number;
}

/** A reply spoken sentence by sentence while the brain still writes it (`CallLeg.sayStream`). */
export interface StreamedPlayResult extends PlayResult {
  /** The sentences that reached the line (at least in part), joined; the rest were cut by barge-in. */
  text: string;
  /** From the first sentence handed to the synthesiser to its first audio. */
  firstAudioMs?: number;
  /** Clock time the reply's first audio went to the line; its first RTP packet leaves within 20 ms. */
  firstPlayAt?: number;
  /** The fallback voice spoke at least one sentence. */
  fallback?: boolean;
}

export type LegEndBy = 'remote' | 'local';

/** Why a transfer did not connect. */
export type TransferFailure = 'busy' | 'no_answer' | 'failed';

/**
 * One answered call. Session code talks to this and nothing else, so a SIP or media-stream leg
 * can replace the simulated one without changing it.
 */
export interface CallLeg {
  readonly id: string;
  readonly direction: CallDirection;
  readonly from: string;
  readonly to: string;
  /** Clock time the far end answered. */
  readonly answeredAt: number;
  /** Answering-machine detection: the far end is a voicemail box, not a person. */
  readonly isVoicemail: boolean;
  /**
   * Speaks a line (the leg synthesises or passes text on, whatever it carries). Resolves when
   * it finished, was interrupted (barge-in, when `interruptible`), or the call ended.
   */
  say(text: string, options: { interruptible: boolean; speed?: number }): Promise<PlayResult>;
  /**
   * Speaks sentences as they arrive, the first while the rest are still being written and
   * synthesised; resolves when the last one finished, the callee barged in (pending synthesis
   * is cancelled), or the call ended. Legs without it get the whole reply through `say`.
   */
  sayStream?(
    sentences: AsyncIterable<string>,
    options: { interruptible: boolean; speed?: number },
  ): Promise<StreamedPlayResult>;
  /**
   * Waits for the callee's next utterance; null after `timeoutMs` of silence or when the call ended.
   * `maxDigits`: a key-press answer is complete at this many keys (or at `#`), without waiting for
   * the pause that otherwise ends it (an IVR menu reacts to one key at once).
   */
  listen(options: { timeoutMs: number; maxDigits?: number }): Promise<Utterance | null>;
  sendDtmf(digits: string): Promise<void>;
  /**
   * Bridges the callee to a human at `number` (a phone number or a SIP address); resolves when the
   * transfer leg was set up or failed, with why it failed when the line knows (an IVR flow branches
   * on it). `callerId`: the number the human sees; `ringTimeoutMs`: give up ringing after this long.
   */
  transfer(
    number: string,
    options?: { callerId?: string; ringTimeoutMs?: number },
  ): Promise<{ ok: boolean; detail?: string; outcome?: TransferFailure }>;
  /**
   * Real lines: speak and listen with other media from now on (an IVR flow hands the call to an
   * assistant with its own voice and recogniser). The simulator, which passes text, has none.
   */
  useMedia?(media: LegMedia): void;
  /** Plays recorded audio (8 kHz mono), e.g. an IVR prompt uploaded as a file. */
  playAudio?(pcm: Int16Array, options: { interruptible: boolean }): Promise<PlayResult>;
  /**
   * Ends the call. After a transfer the SIP adapter bridged itself (the line refused REFER),
   * it ends only the assistant's part: the callee and the human stay connected.
   */
  hangup(): Promise<void>;
  /** Set once the call is over; `by` says which side ended it. */
  readonly ended: { by: LegEndBy; at: number } | null;
  /** Resolves when the call ends, whichever side ends it. */
  readonly whenEnded: Promise<{ by: LegEndBy; at: number }>;
  /**
   * The line's audio is recorded as the call runs (a real line): that file is the call's
   * recording, even when nobody said a word. Absent or false: mixed from the transcript.
   */
  readonly recordsLine?: boolean;
}

/**
 * An inbound call while it rings: the runtime answers it (200 OK) or refuses it (486 busy /
 * 480 unavailable on SIP), and learns when the caller gives up first.
 */
export interface InboundOffer {
  readonly callId: string;
  /** The caller's number. */
  readonly from: string;
  /** The dialled number, in its stored form. */
  readonly to: string;
  /** Simulated carrier only: who is calling. */
  readonly persona?: SimPersona;
  answer(media?: LegMedia): Promise<CallLeg>;
  /** What the caller hears: busy tone, or the number being unavailable. */
  reject(cause: 'busy' | 'unavailable'): Promise<void>;
  /** Aborted when the caller hangs up before the call is answered. */
  readonly cancelled: AbortSignal;
}

export interface TelephonyAdapter {
  readonly kind: 'sim' | 'sip';
  originate(request: OriginateRequest): Promise<OriginateResult>;
  /** Registers the handler of inbound calls; returns the unregister function. */
  onInbound(handler: (offer: InboundOffer) => void): () => void;
  close(): Promise<void>;
}
