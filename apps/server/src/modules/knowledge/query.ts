import type { QueryAnalysis } from '@callpilot/contracts';
import { BUILTIN_TERMS } from './dictionary';
import { digitsFor } from './numbers';
import { synonymsOf } from './synonyms';
import { charsOf, isStopWord, segmentWords } from './text';

/**
 * What callers wrap a question in on the phone: greetings, hedges and thanks. Removed before
 * ranking, longest first, because they say nothing about what is asked yet would count in the
 * share of the question a segment must cover.
 */
const FILLERS = [
  '喂喂喂',
  '喂喂',
  '喂',
  '你好你好',
  '你好',
  '您好',
  '哈喽',
  '在吗',
  '在不在',
  '我想问一下',
  '我想问下',
  '我想问问',
  '想问一下',
  '想问下',
  '想问问',
  '我问一下',
  '我问下',
  '问一下',
  '问下',
  '请问一下',
  '请问下',
  '请问',
  '麻烦问一下',
  '麻烦问下',
  '麻烦你',
  '麻烦您',
  '麻烦',
  '我想了解一下',
  '我想了解下',
  '了解一下',
  '我想咨询一下',
  '我想咨询下',
  '咨询一下',
  '咨询下',
  '帮我查一下',
  '帮我查下',
  '帮我看一下',
  '帮我看看',
  '帮忙看下',
  '我跟你说',
  '跟你说',
  '我跟你讲',
  '是这样的',
  '是这样',
  '就是说',
  '这么说吧',
  '怎么说呢',
  '那个那个',
  '那个',
  '这个这个',
  '然后呢',
  '然后',
  '嗯嗯',
  '嗯',
  '呃',
  '额',
  '啊',
  '哦',
  '噢',
  '哈',
  '呀',
  '吧',
  '呢',
  '啦',
  '嘛',
  '哎',
  '唉',
  '谢谢你',
  '谢谢啊',
  '谢谢',
  '多谢',
  '好的好的',
  '好的',
  '对对对',
  '对对',
  '是的是的',
  '我问你',
  '你们这边',
  '我这边',
  '你这边',
  '的话',
  '一下下',
  '一下',
].sort((a, b) => b.length - a.length);
const FILLER_RE = new RegExp(FILLERS.map((f) => f.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|'), 'gu');

/** Text without call fillers and politeness phrases (a pair written from a caller's words has them). */
export const withoutFillers = (text: string) => text.replace(FILLER_RE, ' ');

export interface TermEntry {
  standard: string;
  variants: string[];
}

const indexes = new WeakMap<TermEntry[], Map<string, string>>();

/**
 * variant → standard, the project's entries overriding the built-in ones. Memoised per list: the
 * project's cached list is the same array until it changes, so a question costs no rebuild.
 */
const NO_TERMS: TermEntry[] = [];

export function termIndex(projectTerms: TermEntry[] = NO_TERMS): Map<string, string> {
  const known = indexes.get(projectTerms);
  if (known) return known;
  const index = new Map<string, string>();
  for (const list of [BUILTIN_TERMS, projectTerms])
    for (const { standard, variants } of list)
      for (const v of variants) index.set(v.toLowerCase(), standard.toLowerCase());
  indexes.set(projectTerms, index);
  return index;
}
const builtinIndex = termIndex();

const patterns = new WeakMap<Map<string, string>, RegExp | null>();
/** The index's variants of two characters or more, longest first, as one pattern. */
function variantPattern(index: Map<string, string>): RegExp | null {
  if (patterns.has(index)) return patterns.get(index)!;
  const variants = [...index.keys()].filter((v) => v.length >= 2).sort((a, b) => b.length - a.length);
  const pattern =
    variants.length === 0
      ? null
      : new RegExp(variants.map((v) => v.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|'), 'giu');
  patterns.set(index, pattern);
  return pattern;
}

export interface QueryTerm {
  term: string;
  /** The term's share before IDF: longer words are more specific (1.5 / 1 / 0.5, a character 0.4). */
  weight: number;
  /** Words that mean the same to a caller; finding one of them counts `credit` of the weight. */
  alternatives: string[];
  /** The caller's own word(s), when the dictionary replaced them with this standard term. */
  spoken: string[];
  /**
   * Two adjacent characters of what the caller said, matched as a substring: it connects words
   * the segmenter cut differently in the question and the document (停机 / 停了机 aside, 流量包 /
   * 流量 包) at a low weight, as BM25 over character bigrams does.
   */
  bigram?: boolean;
  /**
   * Matched as a substring of the segment's text rather than as one of its indexed words: a
   * dictionary's standard term (网速慢) is often several words to the segmenter.
   */
  substring?: boolean;
}

export interface AnalyzedQuery {
  analysis: Omit<QueryAnalysis, 'rewritten'>;
  terms: QueryTerm[];
}

/** A character of a multi-character word, and a character bigram: evidence below a shared word. */
const CHAR_WEIGHT = 0.4;
const BIGRAM_WEIGHT = 0.3;

const lengthWeight = (w: string) => (w.length >= 3 ? 1.5 : w.length === 2 ? 1 : 0.5);

/**
 * A caller's words as searched: fillers removed, numbers as digits, colloquial words replaced by
 * the dictionary's standard term (longest run of consecutive words first), stop words dropped; then
 * each word with its synonyms, and the characters of multi-character words at a low weight.
 */
export function analyzeQuery(query: string, index: Map<string, string> = builtinIndex): AnalyzedQuery {
  const removedFillers: string[] = [];
  const stripped = query.replace(FILLER_RE, (m) => {
    removedFillers.push(m);
    return ' ';
  });
  const spoken = stripped.replace(/\s+/g, ' ').trim();
  const normalized: { from: string; to: string }[] = [];
  const kept: { word: string; spoken: string[] }[] = [];
  // Multi-character colloquialisms are taken out of the text before segmenting: the segmenter
  // may glue them to a neighbour (猫子坏 → one unknown word) and they would never be looked up.
  const phrases = variantPattern(index);
  const unglued = phrases
    ? spoken.replace(phrases, (variant: string, offset: number, text: string) => {
        const standard = index.get(variant.toLowerCase())!;
        const at = standard.indexOf(variant.toLowerCase());
        // 猫 inside 光猫 is the standard already, not a variant of it.
        if (at >= 0 && text.slice(offset - at, offset - at + standard.length).toLowerCase() === standard)
          return variant;
        normalized.push({ from: variant, to: standard });
        kept.push({ word: standard, spoken: [variant.toLowerCase()] });
        return ' ';
      })
    : spoken;
  const cleaned = digitsFor(spoken);
  // Both forms: documents write 7 天 and 七天 alike (indexTerms indexes both as well).
  const rest = digitsFor(unglued);
  const words = segmentWords(rest);
  if (rest !== unglued) words.push(...segmentWords(unglued).filter((w) => !words.includes(w)));
  for (let i = 0; i < words.length; ) {
    let matched = false;
    for (let n = Math.min(4, words.length - i); n >= 1; n--) {
      const phrase = words.slice(i, i + n).join('');
      const standard = index.get(phrase);
      if (standard && standard !== phrase) {
        normalized.push({ from: phrase, to: standard });
        kept.push({ word: standard, spoken: [phrase] });
        i += n;
        matched = true;
        break;
      }
    }
    if (!matched) {
      kept.push({ word: words[i]!, spoken: [] });
      i++;
    }
  }
  const byWord = new Map<string, QueryTerm>();
  for (const { word, spoken } of kept) {
    if (isStopWord(word)) continue;
    const existing = byWord.get(word);
    if (existing) {
      existing.spoken.push(...spoken.filter((s) => !existing.spoken.includes(s)));
      continue;
    }
    byWord.set(word, {
      term: word,
      weight: lengthWeight(word),
      alternatives: [],
      spoken: [...spoken],
      ...(spoken.length > 0 ? { substring: true } : {}),
    });
  }
  const list = [...byWord.values()];
  const own = new Set(list.map((t) => t.term));
  for (const t of list) {
    const alternatives = new Set([...t.spoken.filter((s) => !isStopWord(s)), ...synonymsOf(t.term)]);
    t.alternatives = [...alternatives].filter((w) => !own.has(w));
  }
  // Characters of what the caller said, not of the standard term the dictionary put in its place.
  for (const c of charsOf(list.flatMap((t) => (t.spoken.length > 0 ? t.spoken : [t.term]))))
    if (!own.has(c)) list.push({ term: c, weight: CHAR_WEIGHT, alternatives: [], spoken: [] });
  const known = new Set(list.map((t) => t.term));
  for (const run of cleaned.toLowerCase().match(/\p{Script=Han}{2,}/gu) ?? []) {
    for (let i = 0; i + 2 <= run.length; i++) {
      const pair = run.slice(i, i + 2);
      if (known.has(pair) || isStopWord(pair[0]!) || isStopWord(pair[1]!)) continue;
      known.add(pair);
      list.push({ term: pair, weight: BIGRAM_WEIGHT, alternatives: [], spoken: [], bigram: true });
    }
  }
  return {
    analysis: { original: query, cleaned, removedFillers, normalized },
    terms: list,
  };
}
