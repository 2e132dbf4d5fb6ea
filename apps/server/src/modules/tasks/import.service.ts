import { randomBytes, randomUUID } from 'node:crypto';
import { gunzipSync, gzipSync } from 'node:zlib';
import {
  type AssistantVariable,
  assistantConfig,
  type ColumnMapping,
  IMPORT_REJECT_LABELS,
  type ImportPreview,
  TASK_STATE_LABELS,
  type TaskState,
  taskSettings,
} from '@callpilot/contracts';
import { and, asc, eq, isNull, sql } from 'drizzle-orm';
import ExcelJS from 'exceljs';
import Papa from 'papaparse';
import type { Database } from '../../db/client';
import {
  assistants,
  callTasks,
  doNotCall,
  taskContacts,
  taskImportRejects,
  taskImports,
} from '../../db/schema';
import { AppError, badRequest, conflict, notFound } from '../../lib/errors';
import { normalizePhone } from '../../lib/phone';
import type { DownloadFile } from '../../lib/reply';
import { CSV_CONTENT_TYPE, csvFile, XLSX_CONTENT_TYPE, xlsxFile } from '../../lib/spreadsheet';
import { getPublishedVersion } from '../assistants/assistants.service';
import { decodeText } from '../knowledge/parse';

export const IMPORT_MAX_BYTES = 20 * 1024 * 1024;
export const IMPORT_MAX_ROWS = 100_000;
const SAMPLE_ROWS = 10;
/** Rows per INSERT: one JSON parameter each, so the statement stays small whatever the driver. */
const INSERT_BATCH = 5_000;
const IMPORTABLE_STATES: readonly TaskState[] = ['draft', 'pending', 'paused'];

export type RejectKind = 'invalid' | 'duplicate' | 'do_not_call';
type SheetRow = { n: number; cells: string[] };
/** An upload as kept in task_imports.content until commit: parsed once, so a new mapping is cheap. */
type StoredImport = {
  headers: string[];
  rows: [number, string[]][];
  mapping: ColumnMapping;
};
type Reject = { n: number; kind: RejectKind; phone: string; name: string; reason: string; cells: string[] };
type Accepted = { n: number; phone: string; name: string; variables: Record<string, string> };

const tooLarge = (message: string) => new AppError(413, 'PAYLOAD_TOO_LARGE', message);

// ---------------------------------------------------------------------------------------------
// Parsing

const UNSUPPORTED = '不支持的文件类型，请上传 .csv 或 .xlsx 文件';
const EMPTY = '文件为空，请在第一行填写表头（如“号码”“姓名”），从第二行起每行一个联系人';

/** A file's rows as text (header first), its blank rows dropped; row numbers are the file's own. */
export async function parseContactFile(
  fileName: string,
  bytes: Buffer,
  truncated = false,
): Promise<{ headers: string[]; rows: SheetRow[] }> {
  const ext = /\.([^.]+)$/.exec(fileName)?.[1]?.toLowerCase();
  if (ext === 'xls') throw badRequest('不支持旧版 Excel（.xls），请另存为 .xlsx 或 .csv 后上传');
  if (ext !== 'csv' && ext !== 'xlsx') throw badRequest(UNSUPPORTED);
  if (truncated || bytes.length > IMPORT_MAX_BYTES) throw tooLarge('文件超过 20 MB，请拆分后分批导入');
  if (bytes.length === 0) throw badRequest(EMPTY);
  const rows = ext === 'csv' ? csvRows(bytes) : await xlsxRows(bytes);
  return withHeader(rows);
}

function csvRows(bytes: Buffer): SheetRow[] {
  if (bytes.subarray(0, 4).equals(Buffer.from([0x50, 0x4b, 0x03, 0x04]))) {
    throw badRequest('文件内容是 Excel 表格而不是 CSV，请把扩展名改为 .xlsx 后上传');
  }
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
  if (!bytes.subarray(0, 4).equals(Buffer.from([0x50, 0x4b, 0x03, 0x04]))) {
    throw badRequest('文件内容不是 Excel（.xlsx）表格，请确认文件类型后重新上传');
  }
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

const tooManyRows = () =>
  tooLarge(`一次最多导入 ${IMPORT_MAX_ROWS.toLocaleString('en-US')} 行，请拆分后分批导入`);

function withHeader(all: SheetRow[]): { headers: string[]; rows: SheetRow[] } {
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
export function parsePastedNumbers(text: string): { headers: string[]; rows: SheetRow[] } {
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

// ---------------------------------------------------------------------------------------------
// Mapping

const PHONE_HEADERS = [
  '号码',
  '手机',
  '手机号',
  '手机号码',
  '电话',
  '电话号码',
  '联系电话',
  '联系方式',
  '客户电话',
  '客户手机',
  'phone',
  'mobile',
  'tel',
  'telephone',
  'phone number',
  'mobile phone',
  'cellphone',
];
const NAME_HEADERS = [
  '姓名',
  '名字',
  '客户姓名',
  '客户名称',
  '客户',
  '联系人',
  '称呼',
  'name',
  'full name',
  'customer',
];
const simplify = (header: string) =>
  header
    .trim()
    .toLowerCase()
    .replace(/[\s_]+/g, ' ');

/** Guesses phone, name and variable columns from the headers; the phone column by content if need be. */
export function guessMapping(
  headers: string[],
  rows: SheetRow[],
  variables: AssistantVariable[],
): ColumnMapping {
  const simple = headers.map(simplify);
  const byList = (list: string[]) => simple.findIndex((h) => list.includes(h));
  let phone = byList(PHONE_HEADERS);
  if (phone < 0) phone = simple.findIndex((h) => /手机|电话|号码|phone|mobile|tel/.test(h));
  if (phone < 0) {
    // Headers like "联系人1" or "col_a": the column whose sample cells are mostly numbers wins.
    const sample = rows.slice(0, 50);
    let best = 0;
    headers.forEach((_, i) => {
      const hits = sample.filter((r) => normalizePhone(r.cells[i]).ok).length;
      if (hits > best && hits * 2 >= sample.length) {
        best = hits;
        phone = i;
      }
    });
  }
  if (phone < 0) {
    throw badRequest('未找到号码列：表头须包含“号码”“手机”“电话”或“phone”列（可下载导入模板参照）');
  }
  let name = byList(NAME_HEADERS);
  if (name < 0) name = simple.findIndex((h, i) => i !== phone && /姓名|名字|name/.test(h));
  const mapped: Record<string, string> = {};
  for (const variable of variables) {
    const i = simple.indexOf(simplify(variable.name));
    if (i >= 0) mapped[variable.name] = headers[i]!;
  }
  return {
    phone: headers[phone]!,
    name: name >= 0 && name !== phone ? headers[name]! : '',
    variables: mapped,
  };
}

/** The column indexes a mapping names, or a 400 naming the field when it does not fit the file. */
function resolveMapping(headers: string[], mapping: ColumnMapping, variables: AssistantVariable[]) {
  const indexOf = (field: string, header: string) => {
    const i = headers.indexOf(header);
    if (i < 0) throw badRequest(`字段 ${field}：文件中没有“${header}”列`);
    return i;
  };
  const phone = indexOf('mapping.phone', mapping.phone);
  const name = mapping.name ? indexOf('mapping.name', mapping.name) : -1;
  const vars: { variable: AssistantVariable; index: number }[] = [];
  for (const [key, header] of Object.entries(mapping.variables)) {
    const variable = variables.find((v) => v.name === key);
    if (!variable) throw badRequest(`字段 mapping.variables：小助手没有变量“${key}”`);
    if (header === '') continue;
    vars.push({ variable, index: indexOf(`mapping.variables.${key}`, header) });
  }
  return { phone, name, vars };
}

// ---------------------------------------------------------------------------------------------
// Classification

/** Postgres text[] from one string parameter: 100,000 numbers would exceed the parameter limit as a list. */
const textArray = (values: string[]) => sql`string_to_array(${values.join(',')}, ',')`;

const UNIT_SEPARATOR = '\x1f';
/**
 * A column of a bulk insert as one text parameter, for unnest(): far cheaper to decode than JSON
 * (jsonb_to_recordset took several times longer on PGlite). Each value carries a one-character
 * prefix, removed with substr(), so an empty string stays an element instead of vanishing.
 */
const textColumn = (values: string[]) =>
  sql`string_to_array(${values.map((v) => `.${v.replaceAll(UNIT_SEPARATOR, ' ')}`).join(UNIT_SEPARATOR)}, ${UNIT_SEPARATOR})`;

async function classify(
  db: Database,
  projectId: string,
  taskId: string,
  stored: StoredImport,
  mapping: ColumnMapping,
  variables: AssistantVariable[],
): Promise<{ accepted: Accepted[]; rejects: Reject[] }> {
  const columns = resolveMapping(stored.headers, mapping, variables);
  const rejects: Reject[] = [];
  const candidates: Accepted[] = [];
  const firstRow = new Map<string, number>();
  for (const [n, cells] of stored.rows) {
    const raw = cells[columns.phone] ?? '';
    const name = columns.name >= 0 ? (cells[columns.name] ?? '').trim().slice(0, 100) : '';
    const normalized = normalizePhone(raw);
    if (!normalized.ok) {
      rejects.push({ n, kind: 'invalid', phone: raw.trim(), name, reason: normalized.reason, cells });
      continue;
    }
    const values: Record<string, string> = {};
    let missing = '';
    for (const { variable, index } of columns.vars) {
      const value = (cells[index] ?? '').trim().slice(0, 200);
      if (value === '' && variable.required && !missing) missing = variable.name;
      values[variable.name] = value;
    }
    if (missing) {
      rejects.push({
        n,
        kind: 'invalid',
        phone: normalized.phone,
        name,
        reason: `缺少必填变量“${missing}”`,
        cells,
      });
      continue;
    }
    const earlier = firstRow.get(normalized.phone);
    if (earlier !== undefined) {
      rejects.push({
        n,
        kind: 'duplicate',
        phone: normalized.phone,
        name,
        reason: `与第 ${earlier} 行号码重复`,
        cells,
      });
      continue;
    }
    firstRow.set(normalized.phone, n);
    candidates.push({ n, phone: normalized.phone, name, variables: values });
  }
  const phones = candidates.map((c) => c.phone);
  const [existing, blocked] =
    phones.length === 0
      ? [new Set<string>(), new Set<string>()]
      : await Promise.all([
          db
            .select({ phone: taskContacts.phone })
            .from(taskContacts)
            .where(
              and(eq(taskContacts.taskId, taskId), sql`${taskContacts.phone} = any(${textArray(phones)})`),
            )
            .then((rows) => new Set(rows.map((r) => r.phone))),
          db
            .select({ phone: doNotCall.phone })
            .from(doNotCall)
            .where(
              and(eq(doNotCall.projectId, projectId), sql`${doNotCall.phone} = any(${textArray(phones)})`),
            )
            .then((rows) => new Set(rows.map((r) => r.phone))),
        ]);
  const accepted: Accepted[] = [];
  const cellsOf = new Map(stored.rows);
  for (const c of candidates) {
    if (existing.has(c.phone)) {
      rejects.push({ ...c, kind: 'duplicate', reason: '任务中已有该号码', cells: cellsOf.get(c.n) ?? [] });
    } else if (blocked.has(c.phone)) {
      rejects.push({
        ...c,
        kind: 'do_not_call',
        reason: '号码在免打扰名单中',
        cells: cellsOf.get(c.n) ?? [],
      });
    } else accepted.push(c);
  }
  rejects.sort((a, b) => a.n - b.n);
  return { accepted, rejects };
}

// ---------------------------------------------------------------------------------------------
// Tasks, imports and their assistant

type TaskRow = typeof callTasks.$inferSelect;

async function loadTask(
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

function assertImportable(task: TaskRow): void {
  if (!IMPORTABLE_STATES.includes(task.state)) {
    throw conflict(
      `任务${TASK_STATE_LABELS[task.state]}，不能导入联系人（仅草稿、待开始、已暂停的任务可以导入）`,
    );
  }
}

/** The variables of the assistant the task runs: its frozen version, else the live published one, else the draft. */
export async function taskAssistantVariables(db: Database, task: TaskRow): Promise<AssistantVariable[]> {
  if (!task.assistantId) return [];
  const settings = taskSettings.safeParse(task.settings);
  const version = task.assistantVersion ?? (settings.success ? settings.data.assistantVersion : undefined);
  const published = await getPublishedVersion(db, task.projectId, task.assistantId, version ?? undefined);
  if (published) return published.config.variables;
  const [draft] = await db
    .select({ config: assistants.config })
    .from(assistants)
    .where(and(eq(assistants.id, task.assistantId), eq(assistants.projectId, task.projectId)))
    .limit(1);
  const config = assistantConfig.safeParse(draft?.config ?? {});
  return config.success ? config.data.variables : [];
}

async function loadImport(
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
const readStored = (content: Buffer | Uint8Array): StoredImport =>
  JSON.parse(gunzipSync(content).toString('utf8')) as StoredImport;
const writeStored = (stored: StoredImport) => gzipSync(JSON.stringify(stored), { level: 1 });

/**
 * Time-ordered UUIDs (version 7 layout) numbered by position: a 100,000-row commit then appends
 * to the primary-key index instead of scattering random keys over it, several times faster.
 */
function contactIds(count: number): string[] {
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
  result: { accepted: Accepted[]; rejects: Reject[] },
): ImportPreview {
  const count = (kind: RejectKind) => result.rejects.filter((r) => r.kind === kind).length;
  return {
    importId,
    fileName,
    headers: stored.headers,
    sample: stored.rows
      .slice(0, SAMPLE_ROWS)
      .map(([, cells]) => Object.fromEntries(stored.headers.map((h, i) => [h, cells[i] ?? '']))),
    rows: stored.rows.length,
    valid: result.accepted.length,
    invalid: count('invalid'),
    duplicates: count('duplicate'),
    doNotCall: count('do_not_call'),
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
  sheet: { headers: string[]; rows: SheetRow[] },
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

    // No ON CONFLICT: the task row is locked and existing phones were excluded above, and
    // speculative insertion would slow a 100,000-row commit noticeably.
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
    const count = (kind: RejectKind) => rejects.filter((r) => r.kind === kind).length;
    return {
      added: accepted.length,
      invalid: count('invalid'),
      duplicates: count('duplicate'),
      doNotCall: count('do_not_call'),
    };
  });
}

// ---------------------------------------------------------------------------------------------
// Downloads

/**
 * The refused rows of an import (all, or one kind) as CSV: 原行号, 号码, 姓名, 原因, then the
 * original row. Before commit they are computed with the last previewed mapping. Cells that a
 * spreadsheet would run as a formula are escaped.
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
  const data = rejects.map((r) => [String(r.n), r.phone, r.name, r.reason, ...r.cells]);
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
  const headers = [
    '号码',
    '姓名',
    ...variables.map((v) => v.name).filter((n) => n !== '号码' && n !== '姓名'),
  ];
  const example = [
    '13800138000',
    '张三',
    ...variables
      .filter((v) => v.name !== '号码' && v.name !== '姓名')
      .map((v) => v.sample || `示例${v.name}`),
  ];
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
