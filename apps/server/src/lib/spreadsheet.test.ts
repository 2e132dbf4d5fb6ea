import ExcelJS from 'exceljs';
import Papa from 'papaparse';
import { describe, expect, it } from 'vitest';
import { csvCell, csvFile, csvLine, neutralizeFormula, sheetCell, xlsxFile } from './spreadsheet';

describe('neutralizeFormula', () => {
  it.each([
    ['=1+1', "'=1+1"],
    ['=HYPERLINK("http://x")', `'=HYPERLINK("http://x")`],
    ['@SUM(A1)', "'@SUM(A1)"],
    ['-5 元优惠', "'-5 元优惠"],
    ['-', "'-"],
    // Phone numbers with a country code are text like any other: escaped, digits kept.
    ['+86 138 0013 8000', "'+86 138 0013 8000"],
    ['+1 415 555 0100', "'+1 415 555 0100"],
    ['\t=1+1', "'\t=1+1"],
    ['\rcmd', "'\rcmd"],
  ])('escapes %j', (input, expected) => {
    expect(neutralizeFormula(input)).toBe(expected);
  });

  it.each(['', '13800138000', '010-8888 6666', '张三', '千兆宽带 =1+1', ' =1+1', '＝1+1', "'=1+1"])(
    'leaves %j as it is',
    (input) => {
      expect(neutralizeFormula(input)).toBe(input);
    },
  );

  it('keeps numbers as numbers, negative ones too', () => {
    expect(sheetCell(-5)).toBe(-5);
    expect(sheetCell(42)).toBe(42);
    expect(sheetCell('-5')).toBe("'-5");
  });
});

describe('csv', () => {
  it.each([
    ['张三', '张三'],
    ['a,b', '"a,b"'],
    ['张三, "老客户"', '"张三, ""老客户"""'],
    ['第一行\n第二行', '"第一行\n第二行"'],
    ['a\r\nb', '"a\r\nb"'],
    [' 前后空格 ', '" 前后空格 "'],
    ['=HYPERLINK("http://x")', `"'=HYPERLINK(""http://x"")"`],
    ['\rcmd', `"'\rcmd"`],
    ['+86 138 0013 8000', "'+86 138 0013 8000"],
    [0, '0'],
    [-12.5, '-12.5'],
  ])('encodes the cell %j', (input, expected) => {
    expect(csvCell(input)).toBe(expected);
  });

  it('writes a UTF-8 file with a BOM and CRLF lines that a CSV reader gets back', () => {
    const rows = [
      ['13800138000', '张三, "老客户"', '第一行\n第二行'],
      ['+86 139 0000 2222', '=1+1', ''],
    ];
    const file = csvFile(['号码', '姓名', '备注'], rows);
    expect(file.subarray(0, 3)).toEqual(Buffer.from([0xef, 0xbb, 0xbf]));
    const text = file.toString('utf8');
    expect(text.startsWith('\uFEFF号码,姓名,备注\r\n')).toBe(true);
    expect(text.endsWith('\r\n')).toBe(true);
    expect(Papa.parse<string[]>(text.slice(1), { skipEmptyLines: true }).data).toEqual([
      ['号码', '姓名', '备注'],
      ['13800138000', '张三, "老客户"', '第一行\n第二行'],
      ["'+86 139 0000 2222", "'=1+1", ''],
    ]);
  });

  it('writes one record a line', () => {
    expect(csvLine(['通话ID', 12, '@x'])).toBe("通话ID,12,'@x\r\n");
  });
});

describe('xlsxFile', () => {
  it('stores text cells neutralised, numbers as numbers, and the columns as given', async () => {
    const body = await xlsxFile(
      '名单',
      [
        { header: '号码', width: 18, style: { numFmt: '@' } },
        { header: '=备注', width: 14 },
      ],
      [
        ['+86 138 0013 8000', '@SUM(1)'],
        ['13800138000', 7],
      ],
    );
    const workbook = new ExcelJS.Workbook();
    await workbook.xlsx.load(body as unknown as ArrayBuffer);
    const sheet = workbook.getWorksheet('名单')!;
    expect((sheet.getRow(1).values as unknown[]).slice(1)).toEqual(['号码', "'=备注"]);
    expect((sheet.getRow(2).values as unknown[]).slice(1)).toEqual(["'+86 138 0013 8000", "'@SUM(1)"]);
    expect((sheet.getRow(3).values as unknown[]).slice(1)).toEqual(['13800138000', 7]);
    expect(sheet.getColumn(1).width).toBe(18);
    expect(sheet.getCell('A2').type).toBe(ExcelJS.ValueType.String);
  });
});
