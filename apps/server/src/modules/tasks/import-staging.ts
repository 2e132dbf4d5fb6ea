import { randomBytes, randomUUID } from 'node:crypto';
import type { ColumnMapping, ImportPreview } from '@callpilot/contracts';
import { eq, sql } from 'drizzle-orm';
import type { Database } from '../../db/client';
import { taskImports } from '../../db/schema';
import { conflict } from '../../lib/errors';
import { type Accepted, type Classification, classify, countRejects } from './import-classify';
import { guessMapping } from './import-mapping';
import type { ContactSheet } from './import-parse';
import {
  assertImportable,
  loadImport,
  loadTask,
  readStored,
  type StoredImport,
  taskAssistantVariables,
  writeStored,
} from './import-records';

const SAMPLE_ROWS = 10;
/** Rows per INSERT: one JSON parameter each, so the statement stays small whatever the driver. */
const INSERT_BATCH = 5_000;

const UNIT_SEPARATOR = '\x1f';
/**
 * A column of a bulk insert as one text parameter, for unnest(): far cheaper to decode than JSON
 * (jsonb_to_recordset took several times longer on PGlite). Each value carries a one-character
 * prefix, removed with substr(), so an empty string stays an element instead of vanishing.
 */
export const textColumn = (values: string[]) =>
  sql`string_to_array(${values.map((v) => `.${v.replaceAll(UNIT_SEPARATOR, ' ')}`).join(UNIT_SEPARATOR)}, ${UNIT_SEPARATOR})`;

/**
 * Time-ordered UUIDs (version 7 layout) numbered by position: a 100,000-row commit then appends
 * to the primary-key index instead of scattering random keys over it, several times faster.
 */
export function contactIds(count: number): string[] {
  const time = Date.now().toString(16).padStart(12, '0');
  const random = randomBytes(6).toString('hex');
  return Array.from({ length: count }, (_, i) => {
    const n = i.toString(16).padStart(6, '0');
    return `${time.slice(0, 8)}-${time.slice(8)}-7${n.slice(0, 3)}-8${n.slice(3)}-${random}`;
  });
}

function previewOf(
  importId: string,
  fileName: string,
  stored: StoredImport,
  result: Classification,
): ImportPreview {
  return {
    importId,
    fileName,
    headers: stored.headers,
    sample: stored.rows
      .slice(0, SAMPLE_ROWS)
      .map(([, cells]) => Object.fromEntries(stored.headers.map((h, i) => [h, cells[i] ?? '']))),
    rows: stored.rows.length,
    valid: result.accepted.length,
    ...countRejects(result.rejects),
    mapping: stored.mapping,
  };
}

/**
 * Keeps a parsed upload (or paste) for the task and answers its preview with a guessed mapping.
 * Everything that can be refused is refused before anything is stored.
 */
export async function createImport(
  db: Database,
  projectId: string,
  taskId: string,
  fileName: string,
  sheet: ContactSheet,
): Promise<ImportPreview> {
  const task = await loadTask(db, projectId, taskId);
  assertImportable(task);
  const variables = await taskAssistantVariables(db, task);
  const mapping = guessMapping(sheet.headers, sheet.rows, variables);
  const stored: StoredImport = {
    headers: sheet.headers,
    rows: sheet.rows.map((r) => [r.n, r.cells]),
    mapping,
  };
  const result = await classify(db, projectId, taskId, stored, mapping, variables);
  const importId = randomUUID();
  await db.insert(taskImports).values({
    id: importId,
    projectId,
    taskId,
    fileName: fileName.slice(0, 200),
    content: writeStored(stored),
  });
  return previewOf(importId, fileName, stored, result);
}

/** Recounts an import with another mapping, which becomes the one the rejects download uses. */
export async function previewImport(
  db: Database,
  projectId: string,
  taskId: string,
  importId: string,
  mapping: ColumnMapping,
): Promise<ImportPreview> {
  const task = await loadTask(db, projectId, taskId);
  assertImportable(task);
  const row = await loadImport(db, projectId, taskId, importId);
  if (row.committedAt) throw conflict('该文件已导入，不能再修改列映射');
  const stored = readStored(row.content);
  const variables = await taskAssistantVariables(db, task);
  const result = await classify(db, projectId, taskId, stored, mapping, variables);
  if (JSON.stringify(stored.mapping) !== JSON.stringify(mapping)) {
    stored.mapping = mapping;
    await db
      .update(taskImports)
      .set({ content: writeStored(stored) })
      .where(eq(taskImports.id, importId));
  }
  return previewOf(importId, row.fileName, stored, result);
}

type Transaction = Parameters<Parameters<Database['transaction']>[0]>[0];

/**
 * Adds classified rows to a task, a few thousand per statement. The caller holds the task row's
 * lock and excluded the task's existing phones (classify), so there is no ON CONFLICT:
 * speculative insertion would slow a 100,000-row commit noticeably.
 */
export async function insertContacts(
  tx: Database | Transaction,
  projectId: string,
  taskId: string,
  accepted: Accepted[],
): Promise<void> {
  const ids = contactIds(accepted.length);
  for (let i = 0; i < accepted.length; i += INSERT_BATCH) {
    const batch = accepted.slice(i, i + INSERT_BATCH);
    await tx.execute(sql`
      insert into task_contacts (id, task_id, project_id, phone, name, variables, row_number)
      select substr(r.id, 2), ${taskId}, ${projectId}, substr(r.phone, 2), substr(r.name, 2),
        substr(r.variables, 2)::jsonb, substr(r.row_number, 2)::int
      from unnest(
        ${textColumn(ids.slice(i, i + INSERT_BATCH))},
        ${textColumn(batch.map((c) => c.phone))},
        ${textColumn(batch.map((c) => c.name))},
        ${textColumn(batch.map((c) => JSON.stringify(c.variables)))},
        ${textColumn(batch.map((c) => String(c.n)))}
      ) as r(id, phone, name, variables, row_number)`);
  }
}

export type ImportResultData = { added: number; invalid: number; duplicates: number; doNotCall: number };

/**
 * Adds the valid rows as contacts and records every refused row, in one transaction: a commit
 * either happens whole or not at all, and twice is refused. The counts are taken again inside
 * the transaction (with the task row locked) because contacts may have changed since the preview.
 */
export async function commitImport(
  db: Database,
  projectId: string,
  taskId: string,
  importId: string,
  mapping: ColumnMapping,
): Promise<ImportResultData> {
  return db.transaction(async (tx) => {
    const task = await loadTask(tx, projectId, taskId, true);
    assertImportable(task);
    const row = await loadImport(tx, projectId, taskId, importId, true);
    if (row.committedAt) throw conflict('已导入：该文件已经导入过，不能重复导入');
    const stored = readStored(row.content);
    const variables = await taskAssistantVariables(tx, task);
    const { accepted, rejects } = await classify(tx, projectId, taskId, stored, mapping, variables);

    await insertContacts(tx, projectId, taskId, accepted);
    for (let i = 0; i < rejects.length; i += INSERT_BATCH) {
      const batch = rejects.slice(i, i + INSERT_BATCH);
      await tx.execute(sql`
        insert into task_import_rejects (import_id, task_id, row_number, kind, phone, name, raw)
        select ${importId}, ${taskId}, substr(r.row_number, 2)::int, substr(r.kind, 2), substr(r.phone, 2),
          substr(r.name, 2), substr(r.raw, 2)
        from unnest(
          ${textColumn(batch.map((r) => String(r.n)))},
          ${textColumn(batch.map((r) => r.kind))},
          ${textColumn(batch.map((r) => r.phone.slice(0, 50)))},
          ${textColumn(batch.map((r) => r.name))},
          ${textColumn(
            // The table has no reason column: the reason travels with the original cells.
            batch.map((r) => JSON.stringify({ reason: r.reason, cells: r.cells })),
          )}
        ) as r(row_number, kind, phone, name, raw)`);
    }
    // The rows now live in task_contacts and task_import_rejects; only the headers are still needed.
    await tx
      .update(taskImports)
      .set({ committedAt: new Date(), content: writeStored({ ...stored, rows: [], mapping }) })
      .where(eq(taskImports.id, importId));
    return { added: accepted.length, ...countRejects(rejects) };
  });
}
