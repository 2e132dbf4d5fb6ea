import type { RecognitionOptions, RecognitionSession, TelephonyUtterance, Transcript } from './types';

/** Every recogniser hears the line as the media worker decodes it. */
export const TELEPHONY_SAMPLE_RATE = 8000;

export const utteranceDurationMs = (utterance: TelephonyUtterance) =>
  Math.round((utterance.pcm.length * 1000) / utterance.sampleRate);

/**
 * What every `transcribe` checks first: 8 kHz audio, a caller still on the line. Returns the
 * empty transcript of an empty utterance: a provider would answer nothing after a round trip.
 */
export function emptyOrChecked(
  utterance: TelephonyUtterance,
  recognition: RecognitionOptions,
): Transcript | null {
  if (utterance.sampleRate !== TELEPHONY_SAMPLE_RATE)
    throw new Error(`expected 8 kHz telephony audio, got ${utterance.sampleRate} Hz`);
  recognition.signal?.throwIfAborted();
  return utterance.pcm.length === 0 ? { text: '', durationMs: 0 } : null;
}

/** A whole utterance through a streaming session, for vendors whose only protocol is the stream. */
export async function transcribeBySession(
  open: (recognition: RecognitionOptions) => RecognitionSession,
  utterance: TelephonyUtterance,
  recognition: RecognitionOptions,
): Promise<Transcript> {
  const empty = emptyOrChecked(utterance, recognition);
  if (empty) return empty;
  const session = open(recognition);
  session.write(utterance.pcm);
  return session.finish();
}
