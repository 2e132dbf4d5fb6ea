import { describe, expect, it } from 'vitest';
import { officeBomb, PNG_BYTES, zipOf } from '../../test/zip-fixtures';
import { makeDocx, makeXlsx } from '../modules/knowledge/fixtures.test-helper';
import {
  contentMismatchText,
  officeFileProblem,
  sniffType,
  ZIP_LIMITS,
  zipBombProblem,
} from './upload-content';

describe('archive bomb check', () => {
  it('passes real Office files', async () => {
    expect(zipBombProblem(await makeDocx(['第一段', '第二段']))).toBeUndefined();
    expect(zipBombProblem(await makeXlsx([['问题', '答案']]))).toBeUndefined();
    // A large but ordinary sheet part: 2 MB of varied rows packs well under 100:1.
    const rows = Array.from(
      { length: 40_000 },
      (_, i) => `<row r="${i}"><c><v>${(i * 7919) % 100_003}</v></c></row>`,
    );
    expect(
      zipBombProblem(zipOf([{ name: 'xl/worksheets/sheet1.xml', data: Buffer.from(rows.join('')) }])),
    ).toBeUndefined();
  });

  it('refuses an archive that unpacks past the total limit', () => {
    const bomb = officeBomb('word/document.xml');
    expect(bomb.length).toBeLessThan(1024 * 1024);
    expect(zipBombProblem(bomb)).toBe('tooLarge');
    expect(officeFileProblem(bomb, 'Word（docx）文档')).toBe('解压后超过 100 MB，疑似压缩炸弹，已拒绝');
  });

  it('refuses a part packed more than 100:1, even when its directory lies about its size', () => {
    const zeros = Buffer.alloc(5 * 1024 * 1024);
    expect(zipBombProblem(zipOf([{ name: 'xl/sharedStrings.xml', data: zeros }]))).toBe('ratio');
    expect(zipBombProblem(zipOf([{ name: 'xl/sharedStrings.xml', data: zeros, declaredSize: 1000 }]))).toBe(
      'ratio',
    );
  });

  it('refuses an under-declared archive once inflating it passes the budget', () => {
    const bomb = zipOf([
      { name: 'word/document.xml', data: Buffer.alloc(101 * 1024 * 1024), declaredSize: 10 },
    ]);
    expect(zipBombProblem(bomb)).toBe('tooLarge');
  });

  it('refuses too many entries', () => {
    const entries = Array.from({ length: ZIP_LIMITS.maxEntries + 1 }, (_, i) => ({
      name: `x/${i}.xml`,
      data: Buffer.from('a'),
      method: 0 as const,
    }));
    expect(zipBombProblem(zipOf(entries))).toBe('tooManyEntries');
  });

  it('names what a file really is when its content does not match its name', () => {
    expect(sniffType(PNG_BYTES)).toBe('png');
    expect(officeFileProblem(PNG_BYTES, 'Word（docx）文档')).toBe(
      '文件内容与扩展名不符：应为Word（docx）文档，实际是PNG 图片',
    );
    expect(contentMismatchText(Buffer.from('%PDF-1.7'), 'txt 文本')).toBe(
      '文件内容与扩展名不符：应为txt 文本，实际是PDF 文档',
    );
  });
});
