import ExcelJS from 'exceljs';
import type { FastifyReply } from 'fastify';
import { sendDownload } from '../../lib/reply';
import {
  CSV_BOM,
  CSV_CONTENT_TYPE,
  csvLine,
  type SheetValue,
  sheetCell,
  sheetColumns,
  XLSX_CONTENT_TYPE,
} from '../../lib/spreadsheet';

/** A table of a report's export: a worksheet in Excel, a section of the CSV. */
export interface ReportSheet {
  name: string;
  header: string[];
  rows: SheetValue[][];
}

/** Wide enough for the Chinese header (two columns a character), never narrower than a number. */
const columnWidth = (header: string) => Math.max(10, header.length * 2 + 2);

/**
 * CSV with a BOM (Excel on a Chinese Windows reads it as UTF-8): one table as it is, several one
 * after another, each under its name and apart by a blank line.
 */
export function reportCsv(sheets: readonly ReportSheet[]): Buffer {
  const table = (sheet: ReportSheet) => csvLine(sheet.header) + sheet.rows.map(csvLine).join('');
  const only = sheets.length === 1 ? sheets[0] : undefined;
  const body = only ? table(only) : sheets.map((sheet) => csvLine([sheet.name]) + table(sheet)).join('\r\n');
  return Buffer.from(CSV_BOM + body, 'utf8');
}

/** A workbook built in memory, a worksheet a table: a report is at most a few thousand rows. */
export async function reportXlsx(sheets: readonly ReportSheet[]): Promise<Buffer> {
  const workbook = new ExcelJS.Workbook();
  for (const sheet of sheets) {
    const ws = workbook.addWorksheet(sheet.name);
    ws.columns = sheetColumns(sheet.header.map((header) => ({ header, width: columnWidth(header) })));
    for (const row of sheet.rows) ws.addRow(row.map(sheetCell));
  }
  return Buffer.from(await workbook.xlsx.writeBuffer());
}

/** A report's tables as the chosen file, named after the report and its range. */
export async function sendReportFile(
  reply: FastifyReply,
  name: { zh: string; ascii: string },
  range: { from: string; to: string },
  format: 'csv' | 'xlsx',
  sheets: readonly ReportSheet[],
) {
  const body = format === 'xlsx' ? await reportXlsx(sheets) : reportCsv(sheets);
  const contentType = format === 'xlsx' ? XLSX_CONTENT_TYPE : CSV_CONTENT_TYPE;
  const suffix = `${range.from}_${range.to}.${format}`;
  return sendDownload(
    reply,
    { fileName: `${name.zh}-${suffix}`, contentType, body },
    `${name.ascii}-${suffix}`,
  );
}
