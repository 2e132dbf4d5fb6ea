import { inflateRawSync } from 'node:zlib';

/**
 * What an uploaded Office file (docx, xlsx: both zip archives) may unpack to. A real sheet of
 * 50,000 contacts or a long Word manual stays far below; an archive bomb (a few KB that inflate
 * to gigabytes) would take the process's memory with it once exceljs or mammoth unzips it.
 */
export const ZIP_LIMITS = {
  /** Everything inside, uncompressed. */
  maxTotalBytes: 100 * 1024 * 1024,
  /** Uncompressed to compressed, per entry, for entries above ratioFloorBytes. */
  maxRatio: 100,
  /** Small parts (XML boilerplate of a few KB) compress far beyond 100:1 and are harmless. */
  ratioFloorBytes: 1024 * 1024,
  maxEntries: 10_000,
} as const;

const EOCD = 0x06054b50;
const CENTRAL = 0x02014b50;
const LOCAL = 0x04034b50;
const ZIP64_MARK = 0xffffffff;

const MB = (bytes: number) => Math.round(bytes / 1024 / 1024);

export const zipProblemText = {
  notZip: '文件内容不是有效的压缩包（docx、xlsx 均为 zip 格式）',
  tooManyEntries: `压缩包内文件超过 ${ZIP_LIMITS.maxEntries} 个，疑似压缩炸弹，已拒绝`,
  tooLarge: `解压后超过 ${MB(ZIP_LIMITS.maxTotalBytes)} MB，疑似压缩炸弹，已拒绝`,
  ratio: `压缩比超过 ${ZIP_LIMITS.maxRatio}:1，疑似压缩炸弹，已拒绝`,
  method: '压缩包使用了不支持的压缩方式，请用 Office 或 WPS 另存后重新上传',
} as const;

export type ZipProblem = keyof typeof zipProblemText;

/**
 * Reads a zip's central directory (the list at its end of every entry with its sizes) and refuses
 * an archive bomb before any parser unzips it: too many entries, too much in total, or an entry
 * that inflates more than maxRatio times. The directory's sizes are the archive's own claim, so
 * each deflated entry is then inflated once with the remaining budget as a hard output cap
 * (zlib stops at maxOutputLength): an archive that under-declares its sizes is refused too,
 * having cost at most the budget. ZIP64 archives (needed only past 4 GB or 65,535 entries) are
 * refused as too large. Answers undefined when the archive is acceptable.
 */
export function zipBombProblem(bytes: Buffer): ZipProblem | undefined {
  const eocd = findEndOfCentralDirectory(bytes);
  if (eocd < 0) return 'notZip';
  const declaredEntries = bytes.readUInt16LE(eocd + 10);
  const directoryOffset = bytes.readUInt32LE(eocd + 16);
  if (declaredEntries === 0xffff || directoryOffset === ZIP64_MARK) return 'tooLarge';
  if (declaredEntries > ZIP_LIMITS.maxEntries) return 'tooManyEntries';
  let offset = directoryOffset;
  let entries = 0;
  let budget: number = ZIP_LIMITS.maxTotalBytes;
  while (offset + 46 <= eocd && bytes.readUInt32LE(offset) === CENTRAL) {
    if (++entries > ZIP_LIMITS.maxEntries) return 'tooManyEntries';
    const method = bytes.readUInt16LE(offset + 10);
    const compressed = bytes.readUInt32LE(offset + 20);
    const uncompressed = bytes.readUInt32LE(offset + 24);
    const localOffset = bytes.readUInt32LE(offset + 42);
    if (compressed === ZIP64_MARK || uncompressed === ZIP64_MARK) return 'tooLarge';
    if (uncompressed > budget) return 'tooLarge';
    if (uncompressed > ZIP_LIMITS.ratioFloorBytes && uncompressed > compressed * ZIP_LIMITS.maxRatio)
      return 'ratio';
    const problem = checkEntryData(bytes, localOffset, method, compressed, budget);
    if (typeof problem === 'string') return problem;
    budget -= Math.max(uncompressed, problem);
    offset +=
      46 +
      bytes.readUInt16LE(offset + 28) +
      bytes.readUInt16LE(offset + 30) +
      bytes.readUInt16LE(offset + 32);
  }
  if (entries === 0 && declaredEntries > 0) return 'notZip';
  return undefined;
}

/** Inflates one entry within the budget: its real size, or why it is refused. */
function checkEntryData(
  bytes: Buffer,
  localOffset: number,
  method: number,
  compressed: number,
  budget: number,
): number | ZipProblem {
  if (localOffset + 30 > bytes.length || bytes.readUInt32LE(localOffset) !== LOCAL) return 'notZip';
  const start =
    localOffset + 30 + bytes.readUInt16LE(localOffset + 26) + bytes.readUInt16LE(localOffset + 28);
  const data = bytes.subarray(start, start + compressed);
  if (method === 0) return data.length;
  if (method !== 8) return 'method';
  try {
    const out = inflateRawSync(data, { maxOutputLength: Math.max(1, budget) });
    if (out.length > ZIP_LIMITS.ratioFloorBytes && out.length > compressed * ZIP_LIMITS.maxRatio)
      return 'ratio';
    return out.length;
  } catch (err) {
    if ((err as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE') return 'tooLarge';
    // A damaged stream is the parser's to report ("文件已损坏"), not a bomb.
    return 0;
  }
}

function findEndOfCentralDirectory(bytes: Buffer): number {
  // The record is 22 bytes plus a comment of at most 65,535 bytes, at the very end.
  const lowest = Math.max(0, bytes.length - 22 - 0xffff);
  for (let i = bytes.length - 22; i >= lowest; i--) {
    if (bytes.readUInt32LE(i) === EOCD) return i;
  }
  return -1;
}

/** The type an upload's first bytes show, whatever its name says. */
export type SniffedType = 'zip' | 'pdf' | 'png' | 'jpeg' | 'gif' | 'wav' | 'mp3' | 'ole' | 'unknown';

/** Recognises the binary formats people upload by mistake or on purpose under another name. */
export function sniffType(bytes: Buffer): SniffedType {
  const starts = (...sig: number[]) => sig.every((b, i) => bytes[i] === b);
  if (starts(0x50, 0x4b, 0x03, 0x04) || starts(0x50, 0x4b, 0x05, 0x06)) return 'zip';
  if (bytes.subarray(0, 5).toString('latin1') === '%PDF-') return 'pdf';
  if (starts(0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a)) return 'png';
  if (starts(0xff, 0xd8, 0xff)) return 'jpeg';
  if (bytes.subarray(0, 4).toString('latin1') === 'GIF8') return 'gif';
  if (
    bytes.subarray(0, 4).toString('latin1') === 'RIFF' &&
    bytes.subarray(8, 12).toString('latin1') === 'WAVE'
  )
    return 'wav';
  if (
    bytes.subarray(0, 3).toString('latin1') === 'ID3' ||
    (bytes[0] === 0xff && ((bytes[1] ?? 0) & 0xe0) === 0xe0)
  )
    return 'mp3';
  // The legacy .doc / .xls container: a common "saved as the wrong kind" upload.
  if (starts(0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1)) return 'ole';
  return 'unknown';
}

const SNIFFED_NAMES: Record<SniffedType, string> = {
  zip: 'zip 压缩包（或 docx、xlsx）',
  pdf: 'PDF 文档',
  png: 'PNG 图片',
  jpeg: 'JPEG 图片',
  gif: 'GIF 图片',
  wav: 'WAV 音频',
  mp3: 'MP3 音频',
  ole: '旧版 Office 文件（doc、xls）',
  unknown: '文本或其他格式',
};

/** 「文件内容与扩展名不符」 with what the content really is, for a refusal message. */
export const contentMismatchText = (bytes: Buffer, expected: string) =>
  `文件内容与扩展名不符：应为${expected}，实际是${SNIFFED_NAMES[sniffType(bytes)]}`;

/**
 * The one check every docx/xlsx upload passes before a parser unzips it: a zip by its content
 * (not its name), and no archive bomb. Answers the refusal's text, or undefined.
 */
export function officeFileProblem(bytes: Buffer, expected: string): string | undefined {
  if (sniffType(bytes) !== 'zip') return contentMismatchText(bytes, expected);
  const problem = zipBombProblem(bytes);
  return problem ? zipProblemText[problem] : undefined;
}
