import { Jieba } from '@node-rs/jieba';
import { dict } from '@node-rs/jieba/dict.js';
import { digitsFor } from './numbers';

// Loading the dictionary takes ~100 ms and tens of MB, so it happens once per process, lazily
// (servers that never touch a knowledge base never pay for it).
let jieba: Jieba | undefined;
const segmenter = () => {
  jieba ??= Jieba.withDict(dict);
  return jieba;
};

/** Words that carry no meaning for retrieval: they would match nearly every segment. */
const STOP_WORDS = new Set(
  (
    '的 了 吗 呢 吧 啊 呀 哦 嘛 么 是 我 你 您 他 她 它 我们 你们 他们 这 那 这个 那个 这些 那些 ' +
    '请问 请 问 一下 一个 什么 怎么 怎么样 怎样 如何 哪 哪里 哪些 哪个 为什么 可以 可不可以 能 能不能 ' +
    '会 要 想 需要 吗 有 有没有 没有 和 与 及 或 或者 就 都 也 还 在 把 被 给 对 从 到 让 得 地 着 过 ' +
    '呃 嗯 哈 喂 好 好的 知道 告诉 帮 帮我 麻烦 谢谢 多少 几 多 the a an of to is are do does what how'
  ).split(' '),
);

const WORD = /[\p{L}\p{N}]/u;

export const isStopWord = (word: string) => STOP_WORDS.has(word);

/**
 * Search-mode segmentation (long words also yield their sub-words, 多长时间 → 多长 时间 长时间),
 * lower-cased, without punctuation. Used for both indexing and queries so they meet on the same words.
 */
export function segmentWords(text: string): string[] {
  return segmenter()
    .cutForSearch(text, true)
    .map((w) => w.trim().toLowerCase())
    .filter((w) => w.length > 0 && WORD.test(w));
}

const HAN = /\p{Script=Han}/u;

/** The Chinese characters inside multi-character words (安装 → 安 装), each once. */
export function charsOf(words: string[]): string[] {
  const chars = new Set<string>();
  for (const w of words) {
    if (w.length < 2) continue;
    for (const c of w) if (HAN.test(c) && !STOP_WORDS.has(c)) chars.add(c);
  }
  return [...chars];
}

/**
 * The `terms` column the generated tsvector is built from: the words, plus the single characters
 * of multi-character words. A caller rarely uses the document's exact words (装 for 安装, 退掉 for
 * 退订); the shared characters still connect them, at a lower weight than a shared word.
 */
export function indexTerms(text: string): string {
  const words = segmentWords(text);
  // Numbers as written and as digits (七天 and 7天), so a caller's 七天 finds 7 天 and back.
  const digits = digitsFor(text);
  if (digits !== text) {
    const seen = new Set(words);
    for (const w of segmentWords(digits)) if (!seen.has(w)) words.push(w);
  }
  return [...words, ...charsOf(words)].join(' ');
}

/**
 * A segment's `terms`: those of its content and, for a pair, of its similar questions, so a caller
 * who asks the way a similar question does finds the pair through the full-text index.
 */
export function segmentTerms(content: string, similarQuestions: readonly string[] = []): string {
  return indexTerms([content, ...similarQuestions].join('\n'));
}

const SENTENCE_END = /(?<=[。！？；!?;])/u;

/** Splits text that is longer than `max` at sentence ends, and cuts sentences longer than `max`. */
function splitLong(paragraph: string, max: number): string[] {
  if (paragraph.length <= max) return [paragraph];
  const pieces: string[] = [];
  let current = '';
  for (const sentence of paragraph.split(SENTENCE_END)) {
    if (sentence.length > max) {
      if (current) pieces.push(current);
      current = '';
      for (let i = 0; i < sentence.length; i += max) pieces.push(sentence.slice(i, i + max));
      continue;
    }
    if (current.length + sentence.length > max) {
      pieces.push(current);
      current = sentence;
    } else {
      current += sentence;
    }
  }
  if (current) pieces.push(current);
  return pieces;
}

/**
 * Paragraph chunking: paragraphs (lines) are packed together up to `chunkSize` characters; each
 * chunk after the first starts with the last `chunkOverlap` characters of the previous one, so an
 * answer that straddles a boundary is still found whole in one of them. No chunk exceeds chunkSize.
 */
export function chunkText(text: string, chunkSize: number, chunkOverlap: number): string[] {
  const paragraphs = text
    .replace(/\r\n?/g, '\n')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line.length > 0);
  const overlap = Math.min(chunkOverlap, chunkSize - 1);
  // Units leave room for the overlap so that overlap + unit always fits in one chunk.
  const units = paragraphs.flatMap((p) => splitLong(p, Math.max(1, chunkSize - overlap)));
  const chunks: string[] = [];
  let current = '';
  for (const unit of units) {
    if (!current) {
      current = unit;
    } else if (current.length + 1 + unit.length <= chunkSize) {
      current = `${current}\n${unit}`;
    } else {
      chunks.push(current);
      const tailLength = Math.min(overlap, chunkSize - unit.length - 1);
      current = tailLength > 0 ? `${current.slice(-tailLength)}\n${unit}` : unit;
    }
  }
  if (current) chunks.push(current);
  return chunks;
}
