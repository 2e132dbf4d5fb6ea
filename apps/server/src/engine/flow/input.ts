import type { Utterance } from '../telephony/types';

/** What callers say for a key: 一, 幺, 两, 零/洞, 星 (*), 井 (#), and full-width digits. */
const SPOKEN_KEYS: Record<string, string> = {
  零: '0',
  〇: '0',
  洞: '0',
  一: '1',
  幺: '1',
  二: '2',
  两: '2',
  三: '3',
  四: '4',
  五: '5',
  六: '6',
  七: '7',
  拐: '7',
  八: '8',
  九: '9',
  勾: '9',
  星: '*',
  井: '#',
};

/**
 * Text for comparing what a caller said with a keyword: full-width folded to half-width
 * (ＶＩＰ → vip), lower case, without spaces and punctuation (recognisers add them freely).
 */
export function normaliseSpeech(text: string): string {
  return text
    .normalize('NFKC')
    .toLowerCase()
    .replace(/[\s\p{P}\p{S}]+/gu, '');
}

/**
 * Keys spoken instead of pressed ("一", "按 1", "零一号", "1 #"), or null when the words are
 * not keys. Only short answers count: a sentence mentioning a number is not a key press.
 */
export function spokenKeys(text: string): string | null {
  let rest = text.normalize('NFKC').replace(/[\s，。,.!?！？、]+/gu, '');
  rest = rest.replace(/^(我要?按|我选|按|选)/u, '').replace(/(号键|号|键)$/u, '');
  if (rest.length === 0 || rest.length > 32) return null;
  let keys = '';
  for (const ch of rest) {
    if (/[0-9*#]/.test(ch)) keys += ch;
    else if (SPOKEN_KEYS[ch]) keys += SPOKEN_KEYS[ch];
    else return null;
  }
  return keys;
}

/** The keys of an answer: pressed, or spoken as digits; null when the caller said something else. */
export function keysOf(heard: Utterance): string | null {
  if (heard.dtmf) return heard.dtmf;
  return spokenKeys(heard.text);
}

/** A key entry up to (not including) the first `#`; `finished` says whether a `#` ended it. */
export function untilHash(keys: string): { keys: string; finished: boolean } {
  const at = keys.indexOf('#');
  return at === -1 ? { keys, finished: false } : { keys: keys.slice(0, at), finished: true };
}
