import ExcelJS from 'exceljs';
import Papa from 'papaparse';
import { AppError, badRequest } from '../../lib/errors';
import { normalizePhone } from '../../lib/phone';
import { officeFileProblem } from '../../lib/upload-content';
import { decodeText } from '../knowledge/parse';

export const IMPORT_MAX_BYTES = 20 * 1024 * 1024;
export const IMPORT_MAX_ROWS = 100_000;

/** One contact row as text, numbered as in the file so refused rows can be found there. */
export type SheetRow = { n: number; cells: string[] };
/** A parsed upload or paste: unique headers, and every row as wide as the headers. */
export type ContactSheet = { headers: string[]; rows: SheetRow[] };

const tooLarge = (message: string) => new AppError(413, 'PAYLOAD_TOO_LARGE', message);
const tooManyRows = () =>
  tooLarge(`一次最多导入 ${IMPORT_MAX_ROWS.toLocaleString('en-US')} 行，请拆分后分批导入`);

const UNSUPPORTED = '不支持的文件类型，请上传 .csv 或 .xlsx 文件';
const EMPTY = '文件为空，请在第一行填写表头（如“号码”“姓名”），从第二行起每行一个联系人';
/** An .xlsx file is a zip archive; its first bytes tell it from a CSV whatever the file is called. */
const isZip = (bytes: Buffer) => bytes.subarray(0, 4).equals(Buffer.from([0x50, 0x4b, 0x03, 0x04]));

/** A file's rows as text (header first), its blank rows dropped; row numbers are the file's own. */
export async function parseContactFile(
  fileName: string,
  bytes: Buffer,
  truncated = false,
): Promise<ContactSheet> {
  const ext = /\.([^.]+)$/.exec(fileName)?.[1]?.toLowerCase();
  if (ext === 'xls') throw badRequest('不支持旧版 Excel（.xls），请另存为 .xlsx 或 .csv 后上传');
  if (ext !== 'csv' && ext !== 'xlsx') throw badRequest(UNSUPPORTED);
  if (truncated || bytes.length > IMPORT_MAX_BYTES) throw tooLarge('文件超过 20 MB，请拆分后分批导入');
  if (bytes.length === 0) throw badRequest(EMPTY);
  const rows = ext === 'csv' ? csvRows(bytes) : await xlsxRows(bytes);
  return withHeader(rows);
}

function csvRows(bytes: Buffer): SheetRow[] {
  if (isZip(bytes)) throw badRequest('文件内容是 Excel 表格而不是 CSV，请把扩展名改为 .xlsx 后上传');
  // UTF-8 (with or without BOM) or, from Excel on Chinese Windows, GBK/GB18030.
  const text = decodeText(bytes);
  if (text === undefined) throw badRequest('CSV 文件不是 UTF-8 或 GBK 编码的文本，请另存为“CSV UTF-8”后上传');
  const parsed = Papa.parse<string[]>(text.replace(/^\uFEFF/, ''), { skipEmptyLines: false });
  const rows: SheetRow[] = [];
  parsed.data.forEach((cells, i) => {
    rows.push({ n: i + 1, cells: cells.map((c) => String(c ?? '')) });
  });
  return rows;
}

/** What a user sees in a cell: numbers without a trailing ".0", rich text joined, formulas' results. */
export function cellText(value: ExcelJS.CellValue): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'number') {
    // 13800138000 stored as a number must come back as its digits, not "1.38e+10".
    return Number.isInteger(value) && Math.abs(value) < 1e21 ? value.toFixed(0) : String(value);
  }
  if (typeof value === 'string') return value;
  if (typeof value === 'boolean') return value ? 'TRUE' : 'FALSE';
  if (value instanceof Date) {
    const iso = value.toISOString();
    return iso.endsWith('T00:00:00.000Z') ? iso.slice(0, 10) : iso;
  }
  if ('richText' in value) return value.richText.map((part) => part.text).join('');
  if ('formula' in value || 'sharedFormula' in value) {
    return cellText((value as { result?: ExcelJS.CellValue }).result ?? null);
  }
  if ('hyperlink' in value) return cellText(value.text as ExcelJS.CellValue);
  if ('error' in value) return '';
  return '';
}

async function xlsxRows(bytes: Buffer): Promise<SheetRow[]> {
  const problem = officeFileProblem(bytes, 'Excel（.xlsx）表格');
  if (problem) throw badRequest(`字段 file：${problem}`);
  const workbook = new ExcelJS.Workbook();
  try {
    await workbook.xlsx.load(bytes as unknown as ArrayBuffer);
  } catch {
    throw badRequest('Excel 文件已损坏或无法解析，请另存为 .xlsx 或 .csv 后重新上传');
  }
  const sheet = workbook.worksheets[0];
  if (!sheet) throw badRequest('Excel 文件中没有工作表');
  if (sheet.actualRowCount > IMPORT_MAX_ROWS + 1) throw tooManyRows();
  const rows: SheetRow[] = [];
  sheet.eachRow({ includeEmpty: false }, (row) => {
    const cells: string[] = [];
    for (let c = 1; c <= row.cellCount; c++) cells.push(cellText(row.getCell(c).value));
    rows.push({ n: row.number, cells });
  });
  return rows;
}

function withHeader(all: SheetRow[]): ContactSheet {
  const rows = all.filter((r) => r.cells.some((c) => c.trim() !== ''));
  const [first, ...data] = rows;
  if (!first) throw badRequest(EMPTY);
  if (first.cells.some((c) => normalizePhone(c).ok)) {
    throw badRequest('第一行须为表头（如“号码”“姓名”），但第一行是号码：请在文件最上方插入一行表头');
  }
  if (data.length === 0) throw badRequest('文件中只有表头，没有联系人数据');
  if (data.length > IMPORT_MAX_ROWS) throw tooManyRows();
  const headers: string[] = [];
  first.cells.forEach((raw, i) => {
    const base = raw.trim() || `第${i + 1}列`;
    let header = base;
    for (let k = 2; headers.includes(header); k++) header = `${base}(${k})`;
    headers.push(header);
  });
  const width = headers.length;
  return {
    headers,
    rows: data.map((r) => ({
      n: r.n,
      cells: Array.from({ length: width }, (_, i) => r.cells[i] ?? ''),
    })),
  };
}

const PASTE_HEADERS = ['号码', '姓名'];

/**
 * Pasted numbers, one a line: "13800138000", "13800138000,张三", "13800138000<tab>张三" or
 * "138 0013 8000 张三" (a name is whatever follows the number and starts with a non-digit).
 */
export function parsePastedNumbers(text: string): ContactSheet {
  const rows: SheetRow[] = [];
  text.split(/\r\n|\n|\r/).forEach((line, i) => {
    const trimmed = line.trim();
    if (trimmed === '') return;
    const separator = /[,，\t;；]/.exec(trimmed);
    let phone = trimmed;
    let name = '';
    if (separator) {
      phone = trimmed.slice(0, separator.index).trim();
      name = trimmed.slice(separator.index + 1).trim();
    } else {
      const spaced = /^([+＋]?[\d０-９][\d０-９\s\u3000\-()（）]*?)[\s\u3000]+([^\d０-９\s].*)$/.exec(
        trimmed,
      );
      if (spaced) {
        phone = spaced[1]!;
        name = spaced[2]!.trim();
      }
    }
    rows.push({ n: i + 1, cells: [phone, name] });
  });
  if (rows.length === 0) throw badRequest('字段 text：请粘贴号码，每行一个');
  if (rows.length > IMPORT_MAX_ROWS) throw tooManyRows();
  return { headers: PASTE_HEADERS, rows };
}
