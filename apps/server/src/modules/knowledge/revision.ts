import { eq, sql } from 'drizzle-orm';
import type { Database } from '../../db/client';
import { knowledgeBases } from '../../db/schema';

/**
 * Marks a base's searchable content as changed: the term statistics and calibration computed at
 * the previous revision are recomputed on next use. Every write to its segments calls this.
 */
export async function bumpRevision(db: Database, knowledgeBaseId: string): Promise<void> {
  await db
    .update(knowledgeBases)
    .set({ revision: sql`${knowledgeBases.revision} + 1` })
    .where(eq(knowledgeBases.id, knowledgeBaseId));
}
