import type { AssistantVoice, VoiceOption } from '@callpilot/contracts';

export interface SynthesizedSpeech {
  audio: Buffer;
  mimeType: 'audio/wav';
  durationMs: number;
}

/** Turns text into audio the telephony leg or the browser can play. */
export interface SpeechSynthesizer {
  /** The voices this synthesiser offers, for the assistant editor's picker. */
  voices(): VoiceOption[];
  synthesize(
    text: string,
    voice: Pick<AssistantVoice, 'voiceId' | 'speed' | 'volume'>,
  ): Promise<SynthesizedSpeech>;
  close(): Promise<void>;
}

/** What a telephony leg hands a recogniser: one endpointed utterance, as the line carries it. */
export interface TelephonyUtterance {
  /** 16-bit mono samples, decoded from G.711. */
  pcm: Int16Array;
  sampleRate: 8000;
}

export interface RecognitionOptions {
  /** Every assistant speaks Mandarin today; the type widens when one does not. */
  language: 'zh';
  /** Words the recogniser should expect (product names, the assistant's own terms): hotwords. */
  prompt?: string;
  /** The caller hung up or barged in: stop waiting. Rejects with the signal's reason. */
  signal?: AbortSignal;
}

export interface Transcript {
  /** What the caller said, trimmed; empty when the recogniser heard no words. */
  text: string;
  /** How long the recognised audio lasts (not how long recognition took). */
  durationMs: number;
  /** The project's fallback recogniser answered: the primary failed or was too slow. */
  fallback?: boolean;
}

/**
 * Turns a caller's speech into text. Failures reject with a ProviderError (service
 * 'speech_recognition', a Chinese message, a `kind` such as 'timeout' or 'auth'), never with the key.
 */
export interface SpeechRecognizer {
  /** Recognises a whole utterance at once, after the leg's VAD has decided the caller stopped. */
  transcribe(utterance: TelephonyUtterance, options: RecognitionOptions): Promise<Transcript>;
  /**
   * Vendors that recognise while the caller speaks (FunASR, Aliyun NLS, Tencent: issue #14) also
   * open a session, which lets the leg endpoint on the recogniser's own sentence end. Absent:
   * utterance-at-once only, and the leg buffers the utterance for `transcribe`.
   */
  openSession?(options: RecognitionOptions): RecognitionSession;
}

/** A streaming recognition, fed the caller's audio as it arrives. */
export interface RecognitionSession {
  /** One frame of 8 kHz 16-bit mono audio, in order (the media loop's 20 ms ticks). */
  write(pcm: Int16Array): void;
  /** Text so far, as the vendor revises it; the last one before `finish` resolves may change. */
  onPartial(listener: (text: string) => void): void;
  /** No more audio: resolves with the final transcript of everything written. */
  finish(): Promise<Transcript>;
  /** Drops the session without a result (hang-up, barge-in handled elsewhere). */
  abort(): void;
}
