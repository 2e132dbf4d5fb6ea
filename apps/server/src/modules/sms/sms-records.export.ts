import { PassThrough, Readable } from 'node:stream';
import { SMS_MESSAGE_STATUS_LABELS, SMS_SOURCE_LABELS, type SmsMessageFilters } from '@callpilot/contracts';
import ExcelJS from 'exceljs';
import type { Database } from '../../db/client';
import { CSV_BOM, csvLine, sheetCell, sheetColumns } from '../../lib/spreadsheet';
import { chinaTime } from '../calls/calls.export';
import type { SmsMessageRow } from './sms-message-view';
import { iterateSmsMessages, smsMessageWhere } from './sms-records.service';

const failure = (r: SmsMessageRow) =>
  r.status === 'failed' || r.status === 'blocked'
    ? [r.errorCode, r.errorMessage].filter(Boolean).join(' ')
    : '';

const COLUMNS: [string, (row: SmsMessageRow) => string | number][] = [
  ['时间', (r) => chinaTime(r.createdAt)],
  ['手机号', (r) => r.phone],
  ['签名', (r) => r.signatureName],
  ['模板', (r) => r.templateName],
  ['内容', (r) => r.content],
  ['计费条数', (r) => r.parts],
  ['状态', (r) => SMS_MESSAGE_STATUS_LABELS[r.status]],
  ['失败原因', failure],
  ['来源', (r) => SMS_SOURCE_LABELS[r.source]],
  ['通话', (r) => r.callId ?? ''],
  ['任务', (r) => r.taskId ?? ''],
  ['批次', (r) => r.batchId ?? ''],
];

const values = (row: SmsMessageRow) => COLUMNS.map(([, get]) => get(row));

/** CSV with a BOM (Excel on a Chinese Windows reads it as UTF-8), pulled batch by batch like the call export. */
export function exportSmsCsv(db: Database, projectId: string, filters: Partial<SmsMessageFilters>): Readable {
  const where = smsMessageWhere(projectId, filters);
  async function* lines() {
    yield CSV_BOM + csvLine(COLUMNS.map(([title]) => title));
    for await (const batch of iterateSmsMessages(db, where)) {
      yield batch.map((row) => csvLine(values(row))).join('');
    }
  }
  return Readable.from(lines());
}

/** XLSX through exceljs's streaming writer: each row is committed and dropped as it is written. */
export function exportSmsXlsx(
  db: Database,
  projectId: string,
  filters: Partial<SmsMessageFilters>,
): Readable {
  const where = smsMessageWhere(projectId, filters);
  const out = new PassThrough();
  const workbook = new ExcelJS.stream.xlsx.WorkbookWriter({
    stream: out,
    useStyles: false,
    useSharedStrings: false,
  });
  const sheet = workbook.addWorksheet('发送记录');
  sheet.columns = sheetColumns(
    COLUMNS.map(([header]) => ({ header, width: header === '内容' ? 60 : header === '时间' ? 20 : 14 })),
  );
  (async () => {
    for await (const batch of iterateSmsMessages(db, where)) {
      for (const row of batch) sheet.addRow(values(row).map(sheetCell)).commit();
      if (out.writableNeedDrain) await new Promise((resolve) => out.once('drain', resolve));
    }
    sheet.commit();
    await workbook.commit();
  })().catch((err) => out.destroy(err as Error));
  return out;
}
