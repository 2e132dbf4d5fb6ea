import { gunzipSync, gzipSync } from 'node:zlib';
import {
  type AssistantVariable,
  type ColumnMapping,
  TASK_STATE_LABELS,
  type TaskState,
  taskSettings,
} from '@callpilot/contracts';
import { and, eq, isNull } from 'drizzle-orm';
import type { Database } from '../../db/client';
import { callTasks, taskImports } from '../../db/schema';
import { conflict, notFound } from '../../lib/errors';
import { assistantVariables } from '../assistants/call-config';

const IMPORTABLE_STATES: readonly TaskState[] = ['draft', 'pending', 'paused'];

/** An upload as kept in task_imports.content until commit: parsed once, so a new mapping is cheap. */
export type StoredImport = {
  headers: string[];
  rows: [number, string[]][];
  mapping: ColumnMapping;
};

type TaskRow = typeof callTasks.$inferSelect;

export async function loadTask(
  db: Database,
  projectId: string,
  taskId: string,
  forUpdate = false,
): Promise<TaskRow> {
  const query = db
    .select()
    .from(callTasks)
    .where(and(eq(callTasks.id, taskId), eq(callTasks.projectId, projectId), isNull(callTasks.deletedAt)))
    .limit(1);
  const [task] = forUpdate ? await query.for('update') : await query;
  if (!task) throw notFound('任务不存在或已删除');
  return task;
}

export function assertImportable(task: TaskRow): void {
  if (!IMPORTABLE_STATES.includes(task.state)) {
    throw conflict(
      `任务${TASK_STATE_LABELS[task.state]}，不能导入联系人（仅草稿、待开始、已暂停的任务可以导入）`,
    );
  }
}

/** The variables the task's contacts fill: the one resolver's answer for the task's assistant version. */
export async function taskAssistantVariables(db: Database, task: TaskRow): Promise<AssistantVariable[]> {
  if (!task.assistantId) return [];
  const settings = taskSettings.safeParse(task.settings);
  const version = task.assistantVersion ?? (settings.success ? settings.data.assistantVersion : undefined);
  return assistantVariables(db, task.projectId, task.assistantId, version ?? undefined);
}

export async function loadImport(
  db: Database,
  projectId: string,
  taskId: string,
  importId: string,
  forUpdate = false,
) {
  const query = db
    .select()
    .from(taskImports)
    .where(
      and(eq(taskImports.id, importId), eq(taskImports.taskId, taskId), eq(taskImports.projectId, projectId)),
    )
    .limit(1);
  const [row] = forUpdate ? await query.for('update') : await query;
  if (!row) throw notFound('导入记录不存在');
  return row;
}

// Gzipped: 100,000 rows are ~5 MB of JSON but well under 1 MB compressed, and bytea parameters
// are encoded byte by byte on the way to the database.
export const readStored = (content: Buffer | Uint8Array): StoredImport =>
  JSON.parse(gunzipSync(content).toString('utf8')) as StoredImport;
export const writeStored = (stored: StoredImport) => gzipSync(JSON.stringify(stored), { level: 1 });
