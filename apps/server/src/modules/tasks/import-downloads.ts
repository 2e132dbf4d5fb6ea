import { IMPORT_REJECT_LABELS } from '@callpilot/contracts';
import { and, asc, eq } from 'drizzle-orm';
import type { Database } from '../../db/client';
import { taskImportRejects } from '../../db/schema';
import type { DownloadFile } from '../../lib/reply';
import { CSV_CONTENT_TYPE, csvFile, XLSX_CONTENT_TYPE, xlsxFile } from '../../lib/spreadsheet';
import { classify, type Reject, type RejectKind } from './import-classify';
import { loadImport, loadTask, readStored, taskAssistantVariables } from './import-records';

/**
 * The refused rows of an import (all, or one kind) as CSV: 原行号, 号码, 姓名, 原因, then the
 * original row. Before commit they are computed with the last previewed mapping.
 */
export async function importRejectsCsv(
  db: Database,
  projectId: string,
  taskId: string,
  importId: string,
  kind?: RejectKind,
): Promise<DownloadFile> {
  const task = await loadTask(db, projectId, taskId);
  const row = await loadImport(db, projectId, taskId, importId);
  const stored = readStored(row.content);
  let rejects: Reject[];
  if (row.committedAt) {
    const rows = await db
      .select()
      .from(taskImportRejects)
      .where(
        and(eq(taskImportRejects.importId, importId), kind ? eq(taskImportRejects.kind, kind) : undefined),
      )
      .orderBy(asc(taskImportRejects.rowNumber));
    rejects = rows.map((r) => {
      const raw = JSON.parse(r.raw || '{}') as { reason?: string; cells?: string[] };
      return {
        n: r.rowNumber,
        kind: r.kind,
        phone: r.phone,
        name: r.name,
        reason: raw.reason ?? IMPORT_REJECT_LABELS[r.kind],
        cells: raw.cells ?? [],
      };
    });
  } else {
    const variables = await taskAssistantVariables(db, task);
    const result = await classify(db, projectId, taskId, stored, stored.mapping, variables);
    rejects = result.rejects.filter((r) => !kind || r.kind === kind);
  }
  const data = rejects.map((r) => [r.n, r.phone, r.name, r.reason, ...r.cells]);
  const suffix = kind ? `-${IMPORT_REJECT_LABELS[kind]}` : '';
  return {
    fileName: `${row.fileName.replace(/\.[^.]+$/, '')}-未导入${suffix}.csv`,
    contentType: CSV_CONTENT_TYPE,
    body: csvFile(['原行号', '号码', '姓名', '原因', ...stored.headers], data),
  };
}

/** A file to fill in: 号码, 姓名 and the task assistant's variables, with one example row. */
export async function importTemplate(
  db: Database,
  projectId: string,
  taskId: string,
  format: 'csv' | 'xlsx',
): Promise<DownloadFile> {
  const task = await loadTask(db, projectId, taskId);
  const variables = await taskAssistantVariables(db, task);
  const extra = variables.filter((v) => v.name !== '号码' && v.name !== '姓名');
  const headers = ['号码', '姓名', ...extra.map((v) => v.name)];
  const example = ['13800138000', '张三', ...extra.map((v) => v.sample || `示例${v.name}`)];
  const fileName = `联系人导入模板-${task.name}.${format}`;
  if (format === 'csv') return { fileName, contentType: CSV_CONTENT_TYPE, body: csvFile(headers, [example]) };
  const columns = headers.map((header, i) => ({
    header,
    width: i === 0 ? 18 : 14,
    // Text format on the phone column keeps Excel from turning numbers into 1.38001E+10.
    style: i === 0 ? { numFmt: '@' } : {},
  }));
  return { fileName, contentType: XLSX_CONTENT_TYPE, body: await xlsxFile('联系人', columns, [example]) };
}
