/**
 * Cutting a reply that the language model streams as deltas into sentences, so each one can be
 * synthesised as soon as it is complete and the caller hears the answer start while the model is
 * still writing the rest.
 *
 * Rules, and why:
 * - A sentence ends after 。！？；!?; … or a newline; the punctuation stays with it and closing
 *   quotes or brackets right after it are swallowed. Chinese punctuation is decided at once (a
 *   quote arriving in the next delta is dropped from the next piece: it is silent anyway); the
 *   ASCII full stop (3.5, Mr. Smith and e.g. are not ends) and the ellipsis (…… comes as two
 *   tokens) wait for the next character.
 * - The first piece of a reply may also end at a comma (，,、：) once it holds 6 Chinese
 *   characters: "好的，我帮您查一下，" starts playing while the model writes the answer. Later
 *   pieces wait for a sentence end, because many short pieces make choppy prosody.
 * - A piece longer than 60 characters is cut at its last comma, else at a word boundary:
 *   synthesis latency grows with the text, and a run-on sentence must not hold up the audio.
 * - Markdown is stripped (bold, code, headings, bullets, links) since a voice would read the
 *   symbols; numbered list markers become 1、 so the order is still heard. Pieces with nothing
 *   to say (whitespace, a lone ---) are dropped.
 */

/** Characters that end a sentence (the ASCII full stop is handled apart). */
const SENTENCE_ENDS = new Set([...'。！？；!?;…']);
/** Closing quotes and brackets that belong to the sentence they follow. */
const CLOSERS = new Set([...'”’"\'）)】」』》〉]}']);
/** Where the first piece may end early. */
const COMMAS = new Set([...'，,、：']);
/** Commas for cutting an over-long piece. */
const LONG_COMMAS = new Set([...'，,、：；;']);
/** Markdown markers: not spoken, so they do not count towards a piece's length. */
const MARKUP = new Set([...'*`#~']);

const FIRST_PIECE_MIN_HAN = 6;
const MAX_PIECE_CHARS = 60;

/** Abbreviations whose full stop does not end an English sentence. */
const ABBREVIATIONS = new Set([
  'mr',
  'mrs',
  'ms',
  'dr',
  'prof',
  'st',
  'jr',
  'sr',
  'vs',
  'inc',
  'ltd',
  'co',
  'corp',
  'no',
  'fig',
  'approx',
  'dept',
  'e.g',
  'i.e',
  'a.m',
  'p.m',
  'u.s',
]);

const HAN = /\p{Script=Han}/u;
const DIGIT = /[0-9]/;
const WORD_CHAR = /[A-Za-z0-9]/;
/** After a full stop, these mean the sentence really ended there. */
const AFTER_FULL_STOP = /[\s\p{Script=Han}"'”’）)】」』》\]]/u;

/** The cut is not decidable until more text arrives. */
const WAIT = -1;
/** This character does not end a piece. */
const NO = -2;

export class SentenceCutter {
  private buffer = '';
  /** Pieces given out in this reply: only the first may end at a comma. */
  private emitted = 0;
  /** Whether the buffer starts a line, where bullets and headings are markup. */
  private atLineStart = true;

  /** Adds a delta of the reply; returns the sentences it completed, in order. */
  push(delta: string): string[] {
    this.buffer += delta;
    return this.drain(false);
  }

  /** The rest of the reply once the stream has ended (null when nothing is left to say); resets for the next reply. */
  flush(): string | null {
    const pieces = this.drain(true);
    const rest = this.take(this.buffer.length);
    if (rest) pieces.push(rest);
    this.emitted = 0;
    this.atLineStart = true;
    return pieces.length ? pieces.join('') : null;
  }

  private drain(final: boolean): string[] {
    const pieces: string[] = [];
    for (let cut = this.nextCut(final); cut > 0; cut = this.nextCut(final)) {
      const piece = this.take(cut);
      if (piece) pieces.push(piece);
    }
    return pieces;
  }

  /** Removes the first `end` characters of the buffer; returns them cleaned, or null when silent. */
  private take(end: number): string | null {
    const raw = this.buffer.slice(0, end);
    this.buffer = this.buffer.slice(end);
    const piece = cleanPiece(raw, this.atLineStart);
    this.atLineStart = raw.endsWith('\n');
    if (piece) this.emitted++;
    return piece;
  }

  /** Where the next piece ends, or 0 when it is not complete yet. */
  private nextCut(final: boolean): number {
    const text = this.buffer;
    const first = this.emitted === 0;
    let han = 0;
    let length = 0;
    for (let i = 0; i < text.length; i++) {
      const ch = text[i]!;
      if (ch === '\n') return i + 1;
      if (!MARKUP.has(ch)) length++;
      if (HAN.test(ch)) han++;
      let end = NO;
      if (SENTENCE_ENDS.has(ch) || ch === '.') end = sentenceEnd(text, i, final, this.atLineStart);
      else if (first && COMMAS.has(ch) && han >= FIRST_PIECE_MIN_HAN) end = commaEnd(text, i, final);
      if (end === WAIT) return 0;
      if (end !== NO) return end;
      if (length > MAX_PIECE_CHARS) return longCut(text, i);
    }
    return 0;
  }
}

/** End of the sentence whose final punctuation is at `i`, after any closers; or WAIT / NO. */
function sentenceEnd(text: string, i: number, final: boolean, atLineStart: boolean): number {
  const ch = text[i]!;
  let j = i + 1;
  if (ch === '.') {
    while (text[j] === '.') j++;
    if (j === text.length && !final) return WAIT;
    const next = text[j];
    // An ellipsis (...) ends a sentence; a single full stop only outside numbers and abbreviations.
    if (j - i === 1 && !fullStopEnds(text, i, next, atLineStart)) return NO;
  } else if (ch === '…') {
    // …… is usually two tokens: wait for the second rather than leave it to the next piece.
    while (text[j] === '…') j++;
    if (j === text.length && !final) return WAIT;
  } else if (/[!?;]/.test(ch) && j < text.length && WORD_CHAR.test(text[j]!)) {
    // ?id=1 in a link, Yahoo!Japan: ASCII marks inside a word are not ends.
    return NO;
  }
  while (j < text.length && (SENTENCE_ENDS.has(text[j]!) || CLOSERS.has(text[j]!))) j++;
  return j;
}

function fullStopEnds(text: string, i: number, next: string | undefined, atLineStart: boolean): boolean {
  const before = text.slice(0, i);
  if (next !== undefined && DIGIT.test(next) && DIGIT.test(before.at(-1) ?? '')) return false;
  if (next !== undefined && !AFTER_FULL_STOP.test(next)) return false;
  const word = /([A-Za-z][A-Za-z.]*)$/.exec(before)?.[1];
  if (word && (word.length === 1 || ABBREVIATIONS.has(word.toLowerCase()))) return false;
  // "1. " opening a line is a list marker, not the end of a sentence.
  const marker = /(?:^|\n)\s*\d+$/.exec(before);
  if (marker && (marker.index > 0 || atLineStart)) return false;
  return true;
}

/** End of the first piece at the comma at `i`, unless it separates digits (1,000 / 12：30). */
function commaEnd(text: string, i: number, final: boolean): number {
  if (DIGIT.test(text[i - 1] ?? '') && text[i] !== '，' && text[i] !== '、') {
    if (i + 1 === text.length) return final ? i + 1 : WAIT;
    if (DIGIT.test(text[i + 1]!)) return NO;
  }
  return i + 1;
}

/** A piece that reached `limit` without ending: cut at its last comma, else at a word boundary. */
function longCut(text: string, limit: number): number {
  for (let k = limit - 1; k > 0; k--) {
    const ch = text[k]!;
    if (!LONG_COMMAS.has(ch)) continue;
    if ((ch === ',' || ch === ';') && DIGIT.test(text[k - 1]!) && DIGIT.test(text[k + 1] ?? '')) continue;
    return k + 1;
  }
  let cut = limit;
  // Never inside a number (3.5, 1,000) or a word: back off to where the run began.
  const inRun = (at: number) => /[A-Za-z0-9.,:]/.test(text[at - 1]!) && /[A-Za-z0-9.,:]/.test(text[at]!);
  while (cut > 1 && inRun(cut)) cut--;
  if (cut <= 1) cut = limit;
  // Never between the halves of a surrogate pair (emoji).
  if (/[\uDC00-\uDFFF]/.test(text[cut]!)) cut--;
  return cut;
}

/** The piece as it should be spoken: markdown removed, whitespace folded; null when silent. */
function cleanPiece(raw: string, atLineStart: boolean): string | null {
  let text = raw;
  if (atLineStart) {
    text = text.replace(/^\s*(?:#{1,6}\s*|[-*+•]\s+|>\s*)+/u, '').replace(/^\s*(\d{1,2})[.)]\s+/u, '$1、');
  }
  text = text
    .replace(/!?\[([^\]]*)\]\([^)]*\)/gu, '$1')
    .replace(/\*+|`+|~~|__/gu, '')
    // Closers or marks left over from a sentence cut just before them.
    .replace(/^[\s”’"'）)】」』》〉\]}。！？；!?;…，,、：]+/u, '')
    .replace(/\s+/gu, ' ')
    .trim();
  return /[\p{L}\p{N}]/u.test(text) ? text : null;
}
