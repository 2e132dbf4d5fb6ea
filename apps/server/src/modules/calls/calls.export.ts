import { PassThrough, Readable } from 'node:stream';
import {
  CALL_DIRECTION_LABELS,
  CALL_STATUS_LABELS,
  type CallFilters,
  END_REASON_LABELS,
  HANGUP_BY_LABELS,
  INTENT_GRADE_LABELS,
} from '@callpilot/contracts';
import ExcelJS from 'exceljs';
import type { Database } from '../../db/client';
import { CSV_BOM, csvLine, sheetCell, sheetColumns } from '../../lib/spreadsheet';
import { type CallRow, iterateCalls } from './calls.service';

/** China has no daylight saving time, so a fixed +08:00 is exact. */
const CHINA_OFFSET_MS = 8 * 3600 * 1000;
export const chinaTime = (date: Date | null) =>
  date ? new Date(date.getTime() + CHINA_OFFSET_MS).toISOString().slice(0, 19).replace('T', ' ') : '';

const grade = (g: CallRow['intentGrade']) => (g ? `${g} ${INTENT_GRADE_LABELS[g]}` : '');

const COLUMNS: [string, (row: CallRow) => string | number][] = [
  ['开始时间', (r) => chinaTime(r.startedAt)],
  ['方向', (r) => CALL_DIRECTION_LABELS[r.direction]],
  ['主叫号码', (r) => r.callerNumber],
  ['被叫号码', (r) => r.calleeNumber],
  ['任务', (r) => r.taskName ?? ''],
  ['联系人', (r) => r.contactName ?? ''],
  ['小助手', (r) => r.assistantName],
  ['版本', (r) => (r.assistantVersion ? `v${r.assistantVersion}` : '草稿')],
  ['状态', (r) => CALL_STATUS_LABELS[r.status]],
  ['结束原因', (r) => (r.endReason ? END_REASON_LABELS[r.endReason] : '')],
  ['挂断方', (r) => (r.hangupBy ? HANGUP_BY_LABELS[r.hangupBy] : '')],
  ['接通时间', (r) => chinaTime(r.answeredAt)],
  ['结束时间', (r) => chinaTime(r.endedAt)],
  ['通话时长（秒）', (r) => r.talkSeconds],
  ['对话轮次', (r) => r.turnCount],
  ['意向等级', (r) => grade(r.intentGrade)],
  ['机器判定等级', (r) => grade(r.machineGrade)],
  ['人工复核等级', (r) => grade(r.humanGrade)],
  ['标签', (r) => r.tags.join('、')],
  ['摘要', (r) => r.summary],
  ['通话ID', (r) => r.id],
];

const values = (row: CallRow) => COLUMNS.map(([, get]) => get(row));

/** CSV with a BOM, so Excel on a Chinese Windows opens it as UTF-8. Pulled batch by batch. */
export function exportCallsCsv(db: Database, projectId: string, filters: Partial<CallFilters>): Readable {
  async function* lines() {
    yield CSV_BOM + csvLine(COLUMNS.map(([title]) => title));
    for await (const batch of iterateCalls(db, projectId, filters)) {
      yield batch.map((row) => csvLine(values(row))).join('');
    }
  }
  return Readable.from(lines());
}

/** XLSX through exceljs's streaming writer: rows are committed (and dropped) as they are written. */
export function exportCallsXlsx(db: Database, projectId: string, filters: Partial<CallFilters>): Readable {
  const out = new PassThrough();
  const workbook = new ExcelJS.stream.xlsx.WorkbookWriter({
    stream: out,
    useStyles: false,
    useSharedStrings: false,
  });
  const sheet = workbook.addWorksheet('通话记录');
  sheet.columns = sheetColumns(COLUMNS.map(([header]) => ({ header, width: header.length > 4 ? 20 : 14 })));
  (async () => {
    for await (const batch of iterateCalls(db, projectId, filters)) {
      for (const row of batch) sheet.addRow(values(row).map(sheetCell)).commit();
      // Let the zip stream drain to the client before the next batch is read.
      if (out.writableNeedDrain) await new Promise((resolve) => out.once('drain', resolve));
    }
    sheet.commit();
    await workbook.commit();
  })().catch((err) => out.destroy(err as Error));
  return out;
}
