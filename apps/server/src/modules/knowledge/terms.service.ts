import { randomUUID } from 'node:crypto';
import {
  KNOWLEDGE_TERM_FILE_HEADERS,
  KNOWLEDGE_TERMS_MAX,
  type KnowledgeTerm,
  type KnowledgeTermImportRejectedRow,
  type KnowledgeTermImportResult,
  knowledgeTermWriteRequest,
  type Paged,
} from '@callpilot/contracts';
import { and, asc, count, desc, eq, ilike, or, sql } from 'drizzle-orm';
import type { Database } from '../../db/client';
import { knowledgeBases, knowledgeTerms } from '../../db/schema';
import { AppError, badRequest, conflict, notFound } from '../../lib/errors';
import type { DownloadFile } from '../../lib/reply';
import { CSV_CONTENT_TYPE, csvFile, XLSX_CONTENT_TYPE, xlsxFile } from '../../lib/spreadsheet';
import { BUILTIN_TERMS } from './dictionary';
import type { TermEntry } from './query';
import { bumpRevision } from './revision';
import { readSheetRows, type SheetRow } from './sheet-rows';

export type { TermEntry };

type TermRow = typeof knowledgeTerms.$inferSelect;

/** The terms file is a short list; anything larger is not one. */
export const TERMS_FILE_MAX_BYTES = 2 * 1024 * 1024;
/** How a spreadsheet cell lists several variants (ASCII and full-width forms alike). */
const VARIANT_SEPARATORS = /[|｜、,，\r\n]+/;
/** Other processes (an engine worker) see a write within this long. */
const CACHE_TTL_MS = 30_000;

const escapeLike = (text: string) => text.replace(/[\\%_]/g, (c) => `\\${c}`);

const toTerm = (row: TermRow): KnowledgeTerm => ({
  id: row.id,
  standard: row.standard,
  variants: row.variants,
  createdAt: row.createdAt.toISOString(),
  updatedAt: row.updatedAt.toISOString(),
});

// ---------------------------------------------------------------------------------------------
// The cache the query normaliser reads on every question.
// ---------------------------------------------------------------------------------------------

const cache = new Map<string, { terms: TermEntry[]; loadedAt: number }>();
/**
 * Bumped by every write, so a load that began before the write cannot store what it read after
 * the write cleared the cache.
 */
const generations = new Map<string, number>();

function invalidateTerms(projectId: string) {
  cache.delete(projectId);
  generations.set(projectId, (generations.get(projectId) ?? 0) + 1);
}

/**
 * The project's own entries (not the built-in ones), from memory when read in the last 30 s. While
 * warm it answers the same array, so a caller may memoise what it derives from it by identity.
 */
export async function loadProjectTerms(db: Database, projectId: string): Promise<TermEntry[]> {
  const hit = cache.get(projectId);
  if (hit && Date.now() - hit.loadedAt < CACHE_TTL_MS) return hit.terms;
  const generation = generations.get(projectId) ?? 0;
  const rows = await db
    .select({ standard: knowledgeTerms.standard, variants: knowledgeTerms.variants })
    .from(knowledgeTerms)
    .where(eq(knowledgeTerms.projectId, projectId))
    .orderBy(asc(knowledgeTerms.standard));
  if ((generations.get(projectId) ?? 0) === generation) {
    cache.set(projectId, { terms: rows, loadedAt: Date.now() });
  }
  return rows;
}

export const builtinTerms = (): TermEntry[] => BUILTIN_TERMS;

// ---------------------------------------------------------------------------------------------
// Reads and writes.
// ---------------------------------------------------------------------------------------------

export async function listTerms(
  db: Database,
  projectId: string,
  query: { page: number; pageSize: number; keyword?: string },
): Promise<Paged<KnowledgeTerm>> {
  const keyword = query.keyword ? `%${escapeLike(query.keyword)}%` : undefined;
  const where = and(
    eq(knowledgeTerms.projectId, projectId),
    keyword
      ? or(
          ilike(knowledgeTerms.standard, keyword),
          sql`array_to_string(${knowledgeTerms.variants}, chr(10)) ilike ${keyword}`,
        )
      : undefined,
  );
  const [{ total } = { total: 0 }] = await db.select({ total: count() }).from(knowledgeTerms).where(where);
  const rows = await db
    .select()
    .from(knowledgeTerms)
    .where(where)
    .orderBy(desc(knowledgeTerms.createdAt), asc(knowledgeTerms.id))
    .limit(query.pageSize)
    .offset((query.page - 1) * query.pageSize);
  return { items: rows.map(toTerm), total, page: query.page, pageSize: query.pageSize };
}

/** Words compare without case: callers' Latin words (WiFi, wifi) reach search in one case. */
const fold = (word: string) => word.toLowerCase();
const sameWord = (a: string, b: string) => fold(a) === fold(b);
const hasWord = (words: readonly string[], word: string) => words.some((w) => sameWord(w, word));

/** Trimmed, without blanks or repeats (in any case), in the order given. */
function cleanVariants(variants: string[]): string[] {
  const kept: string[] = [];
  for (const variant of variants.map((v) => v.trim())) {
    if (variant && !hasWord(kept, variant)) kept.push(variant);
  }
  return kept;
}

/**
 * Why an entry cannot join the others, or undefined. One word means one thing: a word is either a
 * standard or a variant of exactly one standard, so normalising never depends on which entry is
 * applied first.
 */
function clashOf(entry: TermEntry, others: readonly TermEntry[]): AppError | undefined {
  if (hasWord(entry.variants, entry.standard)) return badRequest('口语说法不能与标准词相同');
  for (const other of others) {
    if (sameWord(other.standard, entry.standard)) return conflict(`标准词已存在：${entry.standard}`);
    if (hasWord(other.variants, entry.standard)) {
      return badRequest(`标准词“${entry.standard}”已是标准词“${other.standard}”的口语说法`);
    }
  }
  for (const variant of entry.variants) {
    for (const other of others) {
      if (sameWord(other.standard, variant)) {
        return badRequest(`口语说法“${variant}”已是标准词，不能再作为口语说法`);
      }
      if (hasWord(other.variants, variant)) {
        return badRequest(`口语说法“${variant}”已属于标准词“${other.standard}”`);
      }
    }
  }
  return undefined;
}

const tooMany = () => badRequest(`口语词典最多 ${KNOWLEDGE_TERMS_MAX} 条，请先删除不再需要的词条`);

/**
 * A write of the project's dictionary: serialised per project (the one-word-one-meaning rule spans
 * rows, so no index can hold it), then every base is marked changed, since its calibration was
 * learnt with the old dictionary.
 */
async function writeTerms<T>(
  db: Database,
  projectId: string,
  write: (tx: Database, rows: TermRow[]) => Promise<{ result: T; changed: boolean }>,
): Promise<T> {
  const result = await db.transaction(async (tx) => {
    const database = tx as unknown as Database;
    await tx.execute(sql`select pg_advisory_xact_lock(hashtext(${`knowledge-terms:${projectId}`}))`);
    const rows = await tx.select().from(knowledgeTerms).where(eq(knowledgeTerms.projectId, projectId));
    const outcome = await write(database, rows);
    if (outcome.changed) {
      // In the same transaction: no base may keep a calibration learnt with the old dictionary.
      const bases = await tx
        .select({ id: knowledgeBases.id })
        .from(knowledgeBases)
        .where(eq(knowledgeBases.projectId, projectId));
      for (const base of bases) await bumpRevision(database, base.id);
    }
    return outcome;
  });
  if (result.changed) invalidateTerms(projectId);
  return result.result;
}

/** Two requests racing on one standard end at the unique index: the same answer as the check. */
function standardRaceOr(err: unknown, standard: string): unknown {
  const code =
    (err as { code?: string }).code ?? (err as { cause?: { code?: string } }).cause?.code ?? undefined;
  return code === '23505' ? conflict(`标准词已存在：${standard}`) : err;
}

export async function createTerm(db: Database, projectId: string, input: TermEntry): Promise<KnowledgeTerm> {
  const entry = { standard: input.standard.trim(), variants: cleanVariants(input.variants) };
  try {
    return await writeTerms(db, projectId, async (tx, rows) => {
      const clash = clashOf(entry, rows);
      if (clash) throw clash;
      if (rows.length >= KNOWLEDGE_TERMS_MAX) throw tooMany();
      const [row] = await tx
        .insert(knowledgeTerms)
        .values({ id: randomUUID(), projectId, ...entry })
        .returning();
      return { result: toTerm(row!), changed: true };
    });
  } catch (err) {
    throw standardRaceOr(err, entry.standard);
  }
}

export async function updateTerm(
  db: Database,
  projectId: string,
  termId: string,
  input: TermEntry,
): Promise<KnowledgeTerm> {
  const entry = { standard: input.standard.trim(), variants: cleanVariants(input.variants) };
  try {
    return await writeTerms(db, projectId, async (tx, rows) => {
      if (!rows.some((r) => r.id === termId)) throw notFound('词条不存在');
      const clash = clashOf(
        entry,
        rows.filter((r) => r.id !== termId),
      );
      if (clash) throw clash;
      const [row] = await tx
        .update(knowledgeTerms)
        .set({ ...entry, updatedAt: new Date() })
        .where(and(eq(knowledgeTerms.id, termId), eq(knowledgeTerms.projectId, projectId)))
        .returning();
      return { result: toTerm(row!), changed: true };
    });
  } catch (err) {
    throw standardRaceOr(err, entry.standard);
  }
}

export async function deleteTerm(db: Database, projectId: string, termId: string): Promise<void> {
  await writeTerms(db, projectId, async (tx, rows) => {
    if (!rows.some((r) => r.id === termId)) throw notFound('词条不存在');
    await tx
      .delete(knowledgeTerms)
      .where(and(eq(knowledgeTerms.id, termId), eq(knowledgeTerms.projectId, projectId)));
    return { result: undefined, changed: true };
  });
}

// ---------------------------------------------------------------------------------------------
// Files: export, and import that merges into what is there.
// ---------------------------------------------------------------------------------------------

export async function exportTerms(
  db: Database,
  projectId: string,
  format: 'csv' | 'xlsx',
): Promise<DownloadFile> {
  const rows = await db
    .select()
    .from(knowledgeTerms)
    .where(eq(knowledgeTerms.projectId, projectId))
    .orderBy(asc(knowledgeTerms.standard));
  const cells = rows.map((r) => [r.standard, r.variants.join('|')]);
  if (format === 'csv') {
    return {
      fileName: '口语词典.csv',
      contentType: CSV_CONTENT_TYPE,
      body: csvFile(KNOWLEDGE_TERM_FILE_HEADERS, cells),
    };
  }
  const body = await xlsxFile(
    '口语词典',
    KNOWLEDGE_TERM_FILE_HEADERS.map((header) => ({ header, width: header === '标准词' ? 16 : 48 })),
    cells,
  );
  return { fileName: '口语词典.xlsx', contentType: XLSX_CONTENT_TYPE, body };
}

const HEADER_RULE = '第一行须为表头“标准词”“口语说法”';

/** The file's non-blank rows as text, numbered as in the file. */
async function readTermFile(fileName: string, bytes: Buffer, truncated: boolean): Promise<SheetRow[]> {
  if (truncated || bytes.length > TERMS_FILE_MAX_BYTES) {
    throw new AppError(413, 'PAYLOAD_TOO_LARGE', '字段 file：文件不能超过 2 MB');
  }
  if (bytes.length === 0) throw badRequest(`字段 file：文件为空，${HEADER_RULE}`);
  return readSheetRows(fileName, bytes, `仅支持 .csv 或 .xlsx 文件，${HEADER_RULE}`);
}

/**
 * Imports a 标准词 / 口语说法 file. Nothing is replaced silently: a standard already in the
 * dictionary (or earlier in the file) gains the row's new variants; a row that would break a rule
 * is left out with the reason the API would give, and the rest are written together.
 */
export async function importTerms(
  db: Database,
  projectId: string,
  file: { fileName: string; bytes: Buffer; truncated: boolean },
): Promise<KnowledgeTermImportResult> {
  const [header, ...data] = await readTermFile(file.fileName, file.bytes, file.truncated);
  const headers = header?.cells.map((c) => c.trim()) ?? [];
  const standardAt = headers.indexOf('标准词');
  const variantsAt = headers.indexOf('口语说法');
  if (standardAt < 0 || variantsAt < 0) throw badRequest(`字段 file：${HEADER_RULE}`);
  if (data.length === 0) throw badRequest('字段 file：文件中只有表头，没有词条');

  return writeTerms(db, projectId, async (tx, rows) => {
    // The dictionary as it will be; `touched` marks entries to write (new ones have no id).
    const entries: (TermEntry & { id?: string; touched: boolean })[] = rows.map((r) => ({
      id: r.id,
      standard: r.standard,
      variants: [...r.variants],
      touched: false,
    }));
    const rejected: KnowledgeTermImportRejectedRow[] = [];
    const touchedIds = new Set<string>();
    let unchanged = 0;
    for (const row of data) {
      const standard = (row.cells[standardAt] ?? '').trim();
      const rawVariants = row.cells[variantsAt] ?? '';
      const reject = (reason: string) =>
        rejected.push({ row: row.n, standard, variants: rawVariants, reason });
      const variants = cleanVariants(rawVariants.split(VARIANT_SEPARATORS));
      const checked = knowledgeTermWriteRequest.safeParse({ standard, variants });
      if (!checked.success) {
        reject(checked.error.issues[0]?.message ?? '格式不正确');
        continue;
      }
      const existing = entries.find((e) => sameWord(e.standard, standard));
      if (existing) {
        const added = variants.filter((v) => !hasWord(existing.variants, v));
        if (added.length === 0) {
          unchanged++;
          continue;
        }
        const merged = { standard: existing.standard, variants: [...existing.variants, ...added] };
        const invalid = knowledgeTermWriteRequest.safeParse(merged);
        if (!invalid.success) {
          reject(`合并后${invalid.error.issues[0]?.message ?? '格式不正确'}`);
          continue;
        }
        const clash = clashOf(
          { standard: existing.standard, variants: added },
          entries.filter((e) => e !== existing),
        );
        if (clash) {
          reject(clash.message);
          continue;
        }
        existing.variants = merged.variants;
        existing.touched = true;
        if (existing.id) touchedIds.add(existing.id);
        continue;
      }
      const clash = clashOf({ standard, variants }, entries);
      if (clash) {
        reject(clash.message);
        continue;
      }
      if (entries.length >= KNOWLEDGE_TERMS_MAX) {
        reject(`口语词典最多 ${KNOWLEDGE_TERMS_MAX} 条`);
        continue;
      }
      entries.push({ standard, variants, touched: true });
    }

    const now = new Date();
    const created = entries.filter((e) => e.touched && !e.id);
    if (created.length > 0) {
      await tx
        .insert(knowledgeTerms)
        .values(
          created.map((e) => ({ id: randomUUID(), projectId, standard: e.standard, variants: e.variants })),
        );
    }
    for (const entry of entries) {
      if (!entry.touched || !entry.id) continue;
      await tx
        .update(knowledgeTerms)
        .set({ variants: entry.variants, updatedAt: now })
        .where(and(eq(knowledgeTerms.id, entry.id), eq(knowledgeTerms.projectId, projectId)));
    }
    return {
      result: { created: created.length, merged: touchedIds.size, unchanged, rejected },
      changed: created.length + touchedIds.size > 0,
    };
  });
}
