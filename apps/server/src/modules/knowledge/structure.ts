import { chunkText } from './text';

/** A segment cut from running text: a question with its answer when the text says so, else prose. */
export interface StructuredPiece {
  content: string;
  question: string | null;
  answer: string | null;
  /** The headings above it, searched with it but not part of what an assistant reads out. */
  context: string;
}

const HEADING = /^\s{0,3}(#{1,6})\s+(.+?)\s*#*\s*$/u;
/** 问：… / Q: … / **问：…** / 1. 问：…, and the answers 答：… / A: …. */
const QUESTION_MARK =
  /^\s*(?:\d+[.、．]\s*)?(?:\*\*|__)?\s*(?:问|Q|q|提问|问题)\s*[：:]\s*(.+?)\s*(?:\*\*|__)?\s*$/u;
const ANSWER_MARK = /^\s*(?:\*\*|__)?\s*(?:答|A|a|回答|答复)\s*[：:]\s*(?:\*\*|__)?\s*(.*)$/u;
/** A heading or bold line asked as a question: ends with a question mark, or asks with 吗/怎么/如何…. */
const ASKS =
  /[？?]\s*$|(?:吗|么|呢)\s*$|^(?:怎么|如何|为什么|什么|哪些|哪里|多少|多久|能否|是否|可以|可不可以)/u;
const BOLD_LINE = /^\s*(?:\*\*|__)(.+?)(?:\*\*|__)\s*$/u;
/** **宽带怎么移机？** 请提前预约…: a bold question with its answer on the same line. */
const INLINE_BOLD_QUESTION = /^\s*(?:\*\*|__)(.+?[？?])\s*(?:\*\*|__)\s*(\S.*)$/u;
/** A short line of its own that asks, numbered or not (1. 宽带怎么移机？): an FAQ entry's question. */
const QUESTION_LINE = /^\s*(?:\d+[.、．)）]\s*|[（(]\d+[)）]\s*)?(.{2,60}[？?])\s*$/u;

/** Column names that mark a table (or a pair file) as questions and answers. */
export const QUESTION_HEADERS = new Set(['问题', '问', 'question', 'q', '标准问题', '常见问题']);
export const ANSWER_HEADERS = new Set(['答案', '答', '回答', 'answer', 'a', '标准答案']);

const TABLE_ROW = /^\s*\|(.*)\|\s*$/u;
const TABLE_RULE = /^\s*\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?\s*$/u;
const cellsOf = (row: string) =>
  TABLE_ROW.exec(row)![1]!
    .split('|')
    .map((c) => c.trim());

const stripInline = (line: string) =>
  line
    .replace(/\*\*|__|`/g, '')
    .replace(/^\s*[-*+]\s+/, '')
    .replace(/^\s*>\s?/, '')
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .trim();

/** Strips a heading's numbering (一、 / 1. / （三）) so it reads as words. */
const headingText = (raw: string) =>
  stripInline(raw)
    .replace(
      /^(?:[一二三四五六七八九十]+[、.．]|\d+(?:\.\d+)*[、.．]?|[（(][一二三四五六七八九十\d]+[)）])\s*/u,
      '',
    )
    .trim();

/**
 * Cuts a document into question-answer pieces where it is written as an FAQ, and prose chunks
 * elsewhere. An FAQ's entries are what callers ask: a `### 宽带怎么移机？` heading or a `问：…` /
 * `Q：…` line is the question of the text under it up to the next one, so the entry is one segment
 * whose question is matched as a pair's would be, instead of being packed with its neighbours into
 * a 500-character chunk that half-matches every question. Prose keeps paragraph chunking, with its
 * section headings as context.
 */
export function structureText(text: string, chunkSize: number, chunkOverlap: number): StructuredPiece[] {
  const lines = text.replace(/\r\n?/g, '\n').split('\n');
  const pieces: StructuredPiece[] = [];
  const headings: { level: number; text: string }[] = [];
  let prose: string[] = [];
  let pair: { question: string; answer: string[]; context: string } | null = null;
  const context = () => headings.map((h) => h.text).join(' ');

  const flushProse = () => {
    const body = prose.join('\n').trim();
    prose = [];
    if (!body) return;
    for (const chunk of chunkText(body, chunkSize, chunkOverlap))
      pieces.push({ content: chunk, question: null, answer: null, context: context() });
  };
  const flushPair = () => {
    if (!pair) return;
    const answer = pair.answer.join('\n').trim();
    if (answer) {
      // A long answer is still one entry; only beyond the chunk size is it cut, each part keeping the question.
      const parts = answer.length > chunkSize ? chunkText(answer, chunkSize, chunkOverlap) : [answer];
      for (const part of parts)
        pieces.push({
          content: `${pair.question}\n${part}`,
          question: pair.question,
          answer: part,
          context: pair.context,
        });
    } else {
      prose.push(pair.question);
    }
    pair = null;
  };
  const startPair = (question: string) => {
    flushPair();
    flushProse();
    pair = { question, answer: [], context: context() };
  };

  // A Markdown table whose header names 问题 and 答案 columns: one pair a row.
  let table: { question: number; answer: number } | null = null;
  for (const [i, raw] of lines.entries()) {
    if (TABLE_ROW.test(raw)) {
      if (TABLE_RULE.test(raw)) continue;
      const cells = cellsOf(raw);
      const next = lines[i + 1] ?? '';
      if (!table && TABLE_RULE.test(next)) {
        const header = cells.map((c) => stripInline(c).toLowerCase());
        const q = header.findIndex((h) => QUESTION_HEADERS.has(h));
        const a = header.findIndex((h) => ANSWER_HEADERS.has(h));
        if (q >= 0 && a >= 0) {
          table = { question: q, answer: a };
          continue;
        }
      }
      if (table) {
        const question = stripInline(cells[table.question] ?? '');
        const answer = stripInline((cells[table.answer] ?? '').replace(/<br\s*\/?>/giu, '\n'));
        if (question && answer) {
          startPair(question);
          (pair as unknown as { answer: string[] }).answer.push(answer);
          flushPair();
        }
        continue;
      }
      // Any other table is prose, a row a line.
      const line = cells.map(stripInline).filter(Boolean).join('，');
      if (line) prose.push(line);
      continue;
    }
    table = null;
    const heading = HEADING.exec(raw);
    if (heading) {
      const title = headingText(heading[2]!);
      if (ASKS.test(title)) {
        startPair(title);
        continue;
      }
      flushPair();
      flushProse();
      const level = heading[1]!.length;
      while (headings.length > 0 && headings[headings.length - 1]!.level >= level) headings.pop();
      headings.push({ level, text: title });
      continue;
    }
    const asked = QUESTION_MARK.exec(raw);
    if (asked) {
      startPair(stripInline(asked[1]!));
      continue;
    }
    const inline = INLINE_BOLD_QUESTION.exec(raw);
    if (inline) {
      startPair(stripInline(inline[1]!));
      (pair as unknown as { answer: string[] }).answer.push(stripInline(inline[2]!));
      continue;
    }
    const bold = BOLD_LINE.exec(raw);
    if (bold && ASKS.test(stripInline(bold[1]!))) {
      startPair(stripInline(bold[1]!));
      continue;
    }
    const questionLine = QUESTION_LINE.exec(stripInline(raw));
    if (questionLine && !ANSWER_MARK.test(raw)) {
      startPair(questionLine[1]!.trim());
      continue;
    }
    if (pair) {
      const answered = ANSWER_MARK.exec(raw);
      const text = stripInline(answered ? answered[1]! : raw);
      if (text) (pair as { answer: string[] }).answer.push(text);
      continue;
    }
    const text = stripInline(raw);
    if (text) prose.push(text);
  }
  flushPair();
  flushProse();
  return pieces;
}
