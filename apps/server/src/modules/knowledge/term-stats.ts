import { and, eq, inArray } from 'drizzle-orm';
import type { Database } from '../../db/client';
import { knowledgeBases, knowledgeDocuments, knowledgeSegments } from '../../db/schema';

/** Document frequencies of one base's terms: in how many enabled, ready segments each occurs. */
export interface TermStats {
  segments: number;
  df: Pick<Map<string, number>, 'get'>;
}

type Entry = { revision: number; stats: TermStats; refreshing?: Promise<void> };
const cache = new Map<string, Entry>();
const MAX_BASES = 200;

async function compute(db: Database, knowledgeBaseId: string): Promise<TermStats> {
  const rows = await db
    .select({ terms: knowledgeSegments.terms })
    .from(knowledgeSegments)
    .innerJoin(knowledgeDocuments, eq(knowledgeDocuments.id, knowledgeSegments.documentId))
    .where(
      and(
        eq(knowledgeSegments.knowledgeBaseId, knowledgeBaseId),
        eq(knowledgeSegments.enabled, true),
        eq(knowledgeDocuments.status, 'ready'),
      ),
    );
  const df = new Map<string, number>();
  for (const { terms } of rows) {
    for (const term of new Set(terms.split(' '))) if (term) df.set(term, (df.get(term) ?? 0) + 1);
  }
  return { segments: rows.length, df };
}

/**
 * The bases' term statistics, summed. Computed once per base revision and process; when a base
 * changes, questions keep using the previous statistics while new ones are computed in the
 * background (a term's weight moves little with one edit, and a caller must not wait seconds
 * for a 100,000-segment base to be recounted).
 */
export async function termStats(
  db: Database,
  knowledgeBaseIds: string[],
  /** The bases' current revisions when the caller has just read them (saves a round trip). */
  known?: { id: string; revision: number }[],
): Promise<TermStats> {
  const revisions =
    known ??
    (await db
      .select({ id: knowledgeBases.id, revision: knowledgeBases.revision })
      .from(knowledgeBases)
      .where(inArray(knowledgeBases.id, knowledgeBaseIds)));
  const parts: TermStats[] = [];
  for (const { id, revision } of revisions) {
    const entry = cache.get(id);
    if (!entry) {
      const stats = await compute(db, id);
      if (cache.size >= MAX_BASES) cache.delete(cache.keys().next().value!);
      cache.set(id, { revision, stats });
      parts.push(stats);
      continue;
    }
    if (entry.revision !== revision && !entry.refreshing) {
      entry.refreshing = compute(db, id).then(
        (stats) => {
          cache.set(id, { revision, stats });
        },
        () => {
          entry.refreshing = undefined;
        },
      );
    }
    parts.push(entry.stats);
  }
  return mergedStats(parts);
}

/** Several bases searched together: frequencies add up, looked up per term (no merged copy). */
function mergedStats(parts: TermStats[]): TermStats {
  if (parts.length === 1) return parts[0]!;
  const lookup = {
    get: (term: string) => {
      let n = 0;
      for (const part of parts) n += part.df.get(term) ?? 0;
      return n;
    },
  };
  return {
    segments: parts.reduce((n, p) => n + p.segments, 0),
    df: lookup,
  };
}

/** Waits for background recounts (tests and the calibration want today's statistics). */
export async function settledTermStats(db: Database, knowledgeBaseIds: string[]): Promise<TermStats> {
  await termStats(db, knowledgeBaseIds);
  await Promise.all(knowledgeBaseIds.map((id) => cache.get(id)?.refreshing));
  return termStats(db, knowledgeBaseIds);
}

/** BM25's inverse document frequency: near 0 for a term in every segment, highest for a rare one. */
export const idf = (stats: TermStats, df: number) => Math.log(1 + (stats.segments - df + 0.5) / (df + 0.5));
