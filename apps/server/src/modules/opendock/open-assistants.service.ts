import {
  type AssistantSummary,
  type AssistantVariable,
  assistantVariable,
  type OpenAssistant,
  type Paged,
  type PageQuery,
} from '@callpilot/contracts';
import { and, desc, eq, inArray, sql } from 'drizzle-orm';
import { z } from 'zod';
import type { Database } from '../../db/client';
import { assistantVersions } from '../../db/schema';
import { getAssistant, listAssistants } from '../assistants/assistants.service';

type AssistantListQuery = Parameters<typeof listAssistants>[2] & PageQuery;

const storedVariables = z.array(assistantVariable).catch([]);

/** The published versions of several assistants in one query, newest first, without their configs. */
async function versionsOf(db: Database, projectId: string, assistantIds: string[]) {
  const byAssistant = new Map<string, OpenAssistant['versions']>(assistantIds.map((id) => [id, []]));
  if (assistantIds.length === 0) return byAssistant;
  const rows = await db
    .select({
      assistantId: assistantVersions.assistantId,
      version: assistantVersions.version,
      note: assistantVersions.note,
      publishedAt: assistantVersions.publishedAt,
      variables: sql<unknown>`${assistantVersions.config} -> 'variables'`,
    })
    .from(assistantVersions)
    .where(
      and(eq(assistantVersions.projectId, projectId), inArray(assistantVersions.assistantId, assistantIds)),
    )
    .orderBy(desc(assistantVersions.version));
  for (const row of rows) {
    byAssistant.get(row.assistantId)?.push({
      version: row.version,
      note: row.note,
      publishedAt: row.publishedAt.toISOString(),
      variables: storedVariables.parse(row.variables ?? []) as AssistantVariable[],
    });
  }
  return byAssistant;
}

const toOpen = (summary: AssistantSummary, versions: OpenAssistant['versions']): OpenAssistant => ({
  id: summary.id,
  name: summary.name,
  description: summary.description,
  use: summary.use,
  status: summary.status,
  liveVersion: summary.publishedVersion,
  versions,
  createdAt: summary.createdAt,
  updatedAt: summary.updatedAt,
});

/** The console's assistant list, each with its published versions and their variables. */
export async function listOpenAssistants(
  db: Database,
  projectId: string,
  query: AssistantListQuery,
): Promise<Paged<OpenAssistant>> {
  const page = await listAssistants(db, projectId, query);
  const versions = await versionsOf(
    db,
    projectId,
    page.items.map((item) => item.id),
  );
  return { ...page, items: page.items.map((item) => toOpen(item, versions.get(item.id) ?? [])) };
}

export async function getOpenAssistant(
  db: Database,
  projectId: string,
  assistantId: string,
): Promise<OpenAssistant> {
  const assistant = await getAssistant(db, projectId, assistantId);
  const versions = await versionsOf(db, projectId, [assistant.id]);
  return toOpen(assistant, versions.get(assistant.id) ?? []);
}
