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
