import type { KnowledgeTermImportRejectedRow } from '@callpilot/contracts';

export const TERMS_ACCEPT = '.csv,.xlsx';
export const TERMS_TEMPLATE_FILE_NAME = '口语词典模板.csv';
export const TERMS_REJECTS_FILE_NAME = '口语词典未导入的行.csv';

// The cells come from the user's own file; a spreadsheet must still not run one as a formula.
const cell = (value: string | number) => {
  const text = typeof value === 'number' ? String(value) : /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
};

/** A CSV built in the browser; the BOM makes Excel open the Chinese text as UTF-8. */
const csv = (rows: (string | number)[][]) =>
  new Blob([`\uFEFF${rows.map((row) => row.map(cell).join(',')).join('\r\n')}\r\n`], {
    type: 'text/csv;charset=utf-8',
  });

export const termsTemplateCsv = () =>
  csv([
    ['标准词', '口语说法'],
    ['光猫', '猫|猫子|调制解调器'],
    ['余额', '话费|还剩多少钱'],
  ]);

/** The rows an import left out, as in the file plus the reason, to fix and import again. */
export const rejectedTermsCsv = (rows: readonly KnowledgeTermImportRejectedRow[]) =>
  csv([
    ['行号', '标准词', '口语说法', '原因'],
    ...rows.map((r) => [r.row, r.standard, r.variants, r.reason]),
  ]);
