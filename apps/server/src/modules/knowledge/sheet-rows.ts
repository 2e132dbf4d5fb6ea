import ExcelJS from 'exceljs';
import Papa from 'papaparse';
import { badRequest } from '../../lib/errors';
import { officeFileProblem } from '../../lib/upload-content';
import { cellText } from '../tasks/import-parse';
import { decodeText } from './parse';

/** A row of an uploaded sheet, numbered as in the file so a refused row can be found there. */
export type SheetRow = { n: number; cells: string[] };

const isZip = (bytes: Buffer) => bytes.subarray(0, 4).equals(Buffer.from([0x50, 0x4b, 0x03, 0x04]));

/**
 * The non-blank rows of an uploaded .csv (UTF-8 or GBK) or the first sheet of an .xlsx, as text.
 * A file that is not what its name says is a 400 naming the field `file` and `rule` (what the
 * upload expects), for the batch test and the 口语词典 import alike.
 */
export async function readSheetRows(fileName: string, bytes: Buffer, rule: string): Promise<SheetRow[]> {
  const ext = /\.([^.]+)$/.exec(fileName)?.[1]?.toLowerCase();
  if (ext !== 'csv' && ext !== 'xlsx') throw badRequest(`字段 file：不支持的文件类型，${rule}`);
  const rows: SheetRow[] = [];
  if (ext === 'csv') {
    if (isZip(bytes))
      throw badRequest('字段 file：文件内容是 Excel 表格而不是 CSV，请把扩展名改为 .xlsx 后上传');
    const text = decodeText(bytes);
    if (text === undefined)
      throw badRequest('字段 file：CSV 文件不是 UTF-8 或 GBK 编码的文本，请另存为“CSV UTF-8”后上传');
    const parsed = Papa.parse<string[]>(text.replace(/^\uFEFF/, ''), { skipEmptyLines: false });
    parsed.data.forEach((cells, i) => {
      rows.push({ n: i + 1, cells: cells.map((c) => String(c ?? '')) });
    });
  } else {
    const problem = officeFileProblem(bytes, 'Excel（.xlsx）表格');
    if (problem) throw badRequest(`字段 file：${problem}`);
    const workbook = new ExcelJS.Workbook();
    try {
      await workbook.xlsx.load(bytes as unknown as ArrayBuffer);
    } catch {
      throw badRequest('字段 file：Excel 文件已损坏或无法解析，请另存为 .xlsx 或 .csv 后重新上传');
    }
    workbook.worksheets[0]?.eachRow({ includeEmpty: false }, (row) => {
      const cells: string[] = [];
      for (let c = 1; c <= row.cellCount; c++) cells.push(cellText(row.getCell(c).value));
      rows.push({ n: row.number, cells });
    });
  }
  return rows.filter((r) => r.cells.some((c) => c.trim() !== ''));
}
