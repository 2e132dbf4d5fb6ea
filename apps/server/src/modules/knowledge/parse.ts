import {
  KNOWLEDGE_FILE_TYPES,
  KNOWLEDGE_MAX_FILE_BYTES,
  KNOWLEDGE_MAX_SIMILAR_QUESTION_CHARS,
  KNOWLEDGE_MAX_SIMILAR_QUESTIONS,
  type KnowledgeFileType,
} from '@callpilot/contracts';
import ExcelJS from 'exceljs';
import JSZip from 'jszip';
import mammoth from 'mammoth';
import Papa from 'papaparse';
import { contentMismatchText, officeFileProblem, sniffType } from '../../lib/upload-content';
import { ANSWER_HEADERS, QUESTION_HEADERS, structureText } from './structure';

export const UNSUPPORTED_TYPE = '不支持的文件类型，仅支持 txt、md、pdf、docx、csv、xlsx';
export const EMPTY_FILE = '文件为空';
export const FILE_TOO_LARGE = '文件超过 20 MB';

/** A reason a document cannot be indexed; its message is shown to the user as the document's error. */
export class ParseError extends Error {
  override name = 'ParseError';
}

const fileTypeOf = (fileName: string): KnowledgeFileType | undefined => {
  const ext = /\.([^.]+)$/.exec(fileName)?.[1]?.toLowerCase();
  return (KNOWLEDGE_FILE_TYPES as readonly string[]).includes(ext ?? '')
    ? (ext as KnowledgeFileType)
    : undefined;
};

export const kindOf = (type: KnowledgeFileType): 'text' | 'qa' =>
  type === 'csv' || type === 'xlsx' ? 'qa' : 'text';

/**
 * Plain text as uploaded in China is UTF-8 or, from older Windows tools, GBK/GB18030. Both
 * decoders are strict, so bytes that are neither (a binary renamed to .txt) are refused.
 */
export function decodeText(bytes: Buffer): string | undefined {
  if (bytes.includes(0)) return undefined;
  for (const encoding of ['utf-8', 'gb18030']) {
    try {
      return new TextDecoder(encoding, { fatal: true, ignoreBOM: false }).decode(bytes);
    } catch {
      // try the next encoding
    }
  }
  return undefined;
}

const ZIP_MAGIC = Buffer.from([0x50, 0x4b, 0x03, 0x04]);

async function zipHas(bytes: Buffer, part: string): Promise<boolean> {
  if (!bytes.subarray(0, 4).equals(ZIP_MAGIC)) return false;
  try {
    const zip = await JSZip.loadAsync(bytes);
    return zip.file(part) !== null;
  } catch {
    return false;
  }
}

/**
 * Checks an upload before anything is stored: the extension must be one we index and the bytes
 * must be what the extension claims. Damage deeper inside a well-formed container (a pdf whose
 * objects are broken) shows up at indexing time instead, as the document's failure reason.
 */
export async function checkUpload(
  fileName: string,
  bytes: Buffer,
  truncated: boolean,
): Promise<{ ok: true; fileType: KnowledgeFileType } | { ok: false; reason: string }> {
  const fileType = fileTypeOf(fileName);
  if (!fileType) return { ok: false, reason: UNSUPPORTED_TYPE };
  if (truncated || bytes.length > KNOWLEDGE_MAX_FILE_BYTES) return { ok: false, reason: FILE_TOO_LARGE };
  if (bytes.length === 0) return { ok: false, reason: EMPTY_FILE };
  switch (fileType) {
    case 'pdf':
      if (sniffType(bytes) !== 'pdf') return { ok: false, reason: `文件内容不是 PDF，${UNSUPPORTED_TYPE}` };
      break;
    case 'docx': {
      // A zip is checked for a bomb before JSZip reads it; anything else gets the message below.
      const bomb = sniffType(bytes) === 'zip' ? officeFileProblem(bytes, 'Word（docx）文档') : undefined;
      if (bomb) return { ok: false, reason: bomb };
      if (!(await zipHas(bytes, 'word/document.xml'))) {
        return { ok: false, reason: `文件内容不是 Word（docx）文档，${UNSUPPORTED_TYPE}` };
      }
      break;
    }
    case 'xlsx': {
      // A zip is checked for a bomb before JSZip reads it; anything else gets the message below.
      const bomb = sniffType(bytes) === 'zip' ? officeFileProblem(bytes, 'Excel（xlsx）表格') : undefined;
      if (bomb) return { ok: false, reason: bomb };
      if (!(await zipHas(bytes, 'xl/workbook.xml'))) {
        return { ok: false, reason: `文件内容不是 Excel（xlsx）表格，${UNSUPPORTED_TYPE}` };
      }
      break;
    }
    default: {
      if (sniffType(bytes) !== 'unknown')
        return { ok: false, reason: contentMismatchText(bytes, `${fileType} 文本`) };
      const text = decodeText(bytes);
      if (text === undefined)
        return { ok: false, reason: `文件不是 UTF-8 或 GBK 编码的文本，${UNSUPPORTED_TYPE}` };
      if (text.trim() === '') return { ok: false, reason: EMPTY_FILE };
    }
  }
  return { ok: true, fileType };
}

/** What indexing makes of one document, before it is written. */
export type ParsedSegment = {
  content: string;
  question: string | null;
  answer: string | null;
  /** Other phrasings of a pair's question (相似问); empty for text. */
  similarQuestions: string[];
  /** Headings above a piece of text: searched with it, not read out (structure.ts). */
  context?: string;
};

/**
 * A document's segments, and what its import left out (the document's notice, empty when
 * nothing was): a pair file with a few bad rows is still indexed, and says what it skipped.
 */
export type ParsedDocument = { segments: ParsedSegment[]; notice: string };

const SIMILAR_HEADERS = new Set(['相似问题', '相似问', '相似问法', 'similar', 'similar_questions']);

/** How a cell lists several similar questions: one a line, or separated by | ｜ ； ;. */
const SIMILAR_SEPARATORS = /[\r\n|｜；;]+/u;

/**
 * A cell of similar questions as a list: trimmed, without empties or repeats (nor the question
 * itself), at most KNOWLEDGE_MAX_SIMILAR_QUESTIONS. One longer than the character limit is left
 * out, not cut: half a question would match what the caller never asked.
 */
export function splitSimilarQuestions(
  cell: string,
  question: string,
): { similarQuestions: string[]; tooLong: number; tooMany: number } {
  const seen = new Set([question.trim()]);
  const similarQuestions: string[] = [];
  let tooLong = 0;
  let tooMany = 0;
  for (const piece of cell.split(SIMILAR_SEPARATORS)) {
    const phrasing = piece.trim();
    if (phrasing === '' || seen.has(phrasing)) continue;
    seen.add(phrasing);
    if (phrasing.length > KNOWLEDGE_MAX_SIMILAR_QUESTION_CHARS) tooLong++;
    else if (similarQuestions.length >= KNOWLEDGE_MAX_SIMILAR_QUESTIONS) tooMany++;
    else similarQuestions.push(phrasing);
  }
  return { similarQuestions, tooLong, tooMany };
}

/**
 * Question-answer rows become one segment each, kept exactly as written: they are curated
 * answers an assistant may read out, so chunking or rewording them would change what it says.
 */
function qaPairs(rows: string[][]): ParsedDocument {
  const header = (rows[0] ?? []).map((h) => h.trim().toLowerCase());
  const qi = header.findIndex((h) => QUESTION_HEADERS.has(h));
  const ai = header.findIndex((h) => ANSWER_HEADERS.has(h));
  const si = header.findIndex((h) => SIMILAR_HEADERS.has(h));
  if (qi < 0 || ai < 0)
    throw new ParseError('未找到“问题”和“答案”列：第一行须为表头，包含“问题”和“答案”两列');
  const pairs: ParsedSegment[] = [];
  let skipped = 0;
  let tooLong = 0;
  let tooMany = 0;
  for (const row of rows.slice(1)) {
    const question = row[qi] ?? '';
    const answer = row[ai] ?? '';
    if (row.every((cell) => cell.trim() === '')) continue;
    if (question.trim() === '' || answer.trim() === '') {
      skipped++;
      continue;
    }
    const similar = splitSimilarQuestions(si < 0 ? '' : (row[si] ?? ''), question);
    tooLong += similar.tooLong;
    tooMany += similar.tooMany;
    pairs.push({
      content: `${question}\n${answer}`,
      question,
      answer,
      similarQuestions: similar.similarQuestions,
    });
  }
  if (pairs.length === 0) {
    throw new ParseError(
      skipped > 0 ? `没有有效的问答对：${skipped} 行缺少问题或答案` : '没有问答对：表头下没有数据行',
    );
  }
  const notice = [
    skipped > 0 ? `${skipped} 行缺少问题或答案，已跳过` : '',
    tooLong > 0 ? `${tooLong} 个相似问超过 ${KNOWLEDGE_MAX_SIMILAR_QUESTION_CHARS} 个字符，已跳过` : '',
    tooMany > 0 ? `${tooMany} 个相似问超出每个问题 ${KNOWLEDGE_MAX_SIMILAR_QUESTIONS} 个的上限，已跳过` : '',
  ]
    .filter(Boolean)
    .join('；');
  return { segments: pairs, notice };
}

function csvRows(bytes: Buffer): string[][] {
  const text = decodeText(bytes);
  if (text === undefined) throw new ParseError('CSV 文件不是 UTF-8 或 GBK 编码');
  const parsed = Papa.parse<string[]>(text.replace(/^\uFEFF/, ''), { skipEmptyLines: 'greedy' });
  return parsed.data.map((row) => row.map((cell) => String(cell ?? '')));
}

async function xlsxRows(bytes: Buffer): Promise<string[][]> {
  const workbook = new ExcelJS.Workbook();
  try {
    await workbook.xlsx.load(bytes as unknown as ArrayBuffer);
  } catch {
    throw new ParseError('Excel 文件已损坏或无法解析');
  }
  const sheet = workbook.worksheets[0];
  if (!sheet) throw new ParseError('Excel 文件中没有工作表');
  const rows: string[][] = [];
  sheet.eachRow({ includeEmpty: false }, (row) => {
    const cells: string[] = [];
    for (let c = 1; c <= row.cellCount; c++) cells.push(row.getCell(c).text ?? '');
    rows.push(cells);
  });
  return rows;
}

async function pdfText(bytes: Buffer, onProgress: (fraction: number) => Promise<void>): Promise<string> {
  // unpdf bundles a serverless pdf.js: no native code, no fonts or workers fetched at run time.
  const { getDocumentProxy } = await import('unpdf');
  let pages: string[];
  try {
    const pdf = await getDocumentProxy(new Uint8Array(bytes), { verbosity: 0 });
    pages = [];
    for (let n = 1; n <= pdf.numPages; n++) {
      const page = await pdf.getPage(n);
      const content = await page.getTextContent();
      pages.push(
        content.items
          .map((item) => ('str' in item ? item.str + (item.hasEOL ? '\n' : '') : ''))
          .join('')
          .trim(),
      );
      await onProgress(n / pdf.numPages);
    }
    await (pdf as { destroy?: () => Promise<void> }).destroy?.();
  } catch {
    throw new ParseError('PDF 文件已损坏或无法解析');
  }
  const text = pages.join('\n');
  if (text.trim() === '') throw new ParseError('PDF 中没有可提取的文字（可能是扫描件），请上传文字版 PDF');
  return text;
}

async function docxText(bytes: Buffer): Promise<string> {
  let text: string;
  try {
    text = (await mammoth.extractRawText({ buffer: bytes })).value;
  } catch {
    throw new ParseError('Word 文件已损坏或无法解析');
  }
  if (text.trim() === '') throw new ParseError('Word 文档中没有可提取的文字');
  return text;
}

/**
 * Turns a stored document into segments. Throws ParseError with a user-facing reason when the
 * file cannot be indexed; never returns a partial result (a pair file's skipped rows and similar
 * questions are named in the notice).
 */
export async function parseDocument(
  fileType: KnowledgeFileType,
  bytes: Buffer,
  settings: { chunkSize: number; chunkOverlap: number },
  onProgress: (fraction: number) => Promise<void> = async () => {},
): Promise<ParsedDocument> {
  const chunks = (text: string): ParsedDocument => {
    const pieces = structureText(text, settings.chunkSize, settings.chunkOverlap);
    if (pieces.length === 0) throw new ParseError('文档中没有可提取的文字');
    return {
      segments: pieces.map((p) => ({ ...p, similarQuestions: [] })),
      notice: '',
    };
  };
  switch (fileType) {
    case 'csv':
      return qaPairs(csvRows(bytes));
    case 'xlsx':
      return qaPairs(await xlsxRows(bytes));
    case 'pdf':
      return chunks(await pdfText(bytes, onProgress));
    case 'docx':
      return chunks(await docxText(bytes));
    default: {
      const text = decodeText(bytes);
      if (text === undefined) throw new ParseError('文件不是 UTF-8 或 GBK 编码的文本');
      return chunks(text.replace(/^\uFEFF/, ''));
    }
  }
}
