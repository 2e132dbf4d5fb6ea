import type { AssistantVariable, ColumnMapping } from '@callpilot/contracts';
import { and, eq, sql } from 'drizzle-orm';
import type { Database } from '../../db/client';
import { doNotCall, taskContacts } from '../../db/schema';
import { normalizePhone } from '../../lib/phone';
import { resolveMapping } from './import-mapping';
import type { StoredImport } from './import-records';

export type RejectKind = 'invalid' | 'duplicate' | 'do_not_call';
export type Reject = {
  n: number;
  kind: RejectKind;
  phone: string;
  name: string;
  reason: string;
  cells: string[];
};
export type Accepted = { n: number; phone: string; name: string; variables: Record<string, string> };
export type Classification = { accepted: Accepted[]; rejects: Reject[] };

/** Postgres text[] from one string parameter: 100,000 numbers would exceed the parameter limit as a list. */
const textArray = (values: string[]) => sql`string_to_array(${values.join(',')}, ',')`;

/**
 * Sorts the rows under a mapping: invalid (number or a required variable), duplicate (of an
 * earlier row or of a contact the task has), on the project's do-not-call list, or accepted.
 * Refused rows come back in file order, each with its reason and original cells.
 * `duplicateOf` words a row's duplicate of an earlier one (a file has lines, the open API indexes).
 */
export async function classify(
  db: Database,
  projectId: string,
  taskId: string,
  stored: StoredImport,
  mapping: ColumnMapping,
  variables: AssistantVariable[],
  duplicateOf: (earlier: number) => string = (earlier) => `与第 ${earlier} 行号码重复`,
): Promise<Classification> {
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
        reason: duplicateOf(earlier),
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

/** The refused rows counted by kind, as the preview and the commit report them. */
export function countRejects(rejects: Reject[]) {
  const count = (kind: RejectKind) => rejects.filter((r) => r.kind === kind).length;
  return { invalid: count('invalid'), duplicates: count('duplicate'), doNotCall: count('do_not_call') };
}
