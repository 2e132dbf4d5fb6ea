import ExcelJS from 'exceljs';

/**
 * Every CSV and XLSX file the server hands out is written through here, so that a cell taken
 * from user input (a contact's name, an uploaded header, a knowledge answer, a caller's number)
 * can never run as a formula in the spreadsheet that opens it (CSV injection).
 */

export const CSV_CONTENT_TYPE = 'text/csv; charset=utf-8';
export const XLSX_CONTENT_TYPE = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';

/** Makes Excel open a CSV as UTF-8 instead of garbling the Chinese in the system code page. */
export const CSV_BOM = '\uFEFF';

/** A cell's value: text, or a number that a spreadsheet should treat as one. */
export type SheetValue = string | number;

/**
 * Excel, LibreOffice and Google Sheets run a cell starting with = + - or @; some also treat a
 * leading tab or carriage return that way. A phone number such as "+86 138…" is escaped like any
 * other text: that keeps it text (no formula, no number that loses its "+"), and its digits intact.
 */
const FORMULA_START = /^[=+\-@\t\r]/;

/** The text with a leading apostrophe when a spreadsheet would read it as a formula. */
export const neutralizeFormula = (text: string) => (FORMULA_START.test(text) ? `'${text}` : text);

/** Numbers stay numbers: only text can smuggle in a formula, and -5 is a number, not one. */
export const sheetCell = (value: SheetValue): SheetValue =>
  typeof value === 'number' ? value : neutralizeFormula(value);

/** Quoted as RFC 4180 asks, and also around leading or trailing spaces, which some readers trim. */
const NEEDS_QUOTES = /[",\r\n\uFEFF]|^ | $/;

/** One CSV field: neutralised, then quoted when it holds a separator, a quote or a line break. */
export function csvCell(value: SheetValue): string {
  const text = String(sheetCell(value));
  return NEEDS_QUOTES.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

/** One CSV record with its CRLF, the line ending Excel writes and expects. */
export const csvLine = (values: readonly SheetValue[]) => `${values.map(csvCell).join(',')}\r\n`;

/** A whole CSV file in UTF-8 with a BOM: the header line, then one line a row. */
export const csvFile = (header: readonly SheetValue[], rows: readonly (readonly SheetValue[])[]) =>
  Buffer.from(CSV_BOM + csvLine(header) + rows.map(csvLine).join(''), 'utf8');

export type SheetColumn = { header: string; width?: number; style?: Partial<ExcelJS.Style> };

/** Columns for an exceljs worksheet (buffered or streaming), their headers neutralised too. */
export const sheetColumns = (columns: readonly SheetColumn[]): Partial<ExcelJS.Column>[] =>
  columns.map((column) => ({ ...column, header: neutralizeFormula(column.header) }));

/** One worksheet as an .xlsx file, for exports small enough to build in memory. */
export async function xlsxFile(
  sheetName: string,
  columns: readonly SheetColumn[],
  rows: readonly (readonly SheetValue[])[],
): Promise<Buffer> {
  const workbook = new ExcelJS.Workbook();
  const sheet = workbook.addWorksheet(sheetName);
  sheet.columns = sheetColumns(columns);
  for (const row of rows) sheet.addRow(row.map(sheetCell));
  return Buffer.from(await workbook.xlsx.writeBuffer());
}
