import type { KnowledgeCalibration, KnowledgeVerdict } from '@callpilot/contracts';

/** The confidence an assistant answers at by default (assistantKnowledge.scoreThreshold). */
export const ANSWER_CONFIDENCE = 0.3;
/** The raw relevance that maps to ANSWER_CONFIDENCE before a base has a calibration of its own. */
export const DEFAULT_CUT = 0.45;

export type StoredCalibration = KnowledgeCalibration & { revision: number };

/** What the API shows of a stored calibration (the revision is internal). */
export function publicCalibration(stored: StoredCalibration | null): KnowledgeCalibration | null {
  if (!stored) return null;
  const { revision: _revision, ...rest } = stored;
  return rest;
}

/**
 * Raw relevance → calibrated confidence: piecewise linear through (0, 0), (cut, 0.3), (1, 1), so a
 * confidence of 0.3 means the same thing in every base: the point where, on that base's own probe
 * questions, wrong answers become rare.
 */
export function confidenceOf(relevance: number, cut: number): number {
  const r = Math.max(0, Math.min(1, relevance));
  const c = Math.max(0.01, Math.min(0.99, cut));
  const value =
    r <= c ? (r / c) * ANSWER_CONFIDENCE : ANSWER_CONFIDENCE + ((r - c) / (1 - c)) * (1 - ANSWER_CONFIDENCE);
  return Math.round(value * 1000) / 1000;
}

/** What the assistant does with its best candidate: answer, or refuse and say why. */
export function verdictOf(
  confidence: number,
  threshold: number,
  ambiguous: boolean,
  any: boolean,
): KnowledgeVerdict {
  if (!any) return 'no_match';
  if (confidence < threshold) return 'low_confidence';
  return ambiguous ? 'ambiguous' : 'answer';
}
