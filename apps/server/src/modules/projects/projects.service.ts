import { randomUUID } from 'node:crypto';
import type {
  BalanceLimit,
  ProjectBalance,
  ProjectMember,
  ProjectRegisterRequest,
  ProjectSummary,
} from '@callpilot/contracts';
import { asc, eq } from 'drizzle-orm';
import type { Database } from '../../db/client';
import { memberships, projectLimits, projects, users } from '../../db/schema';

/** A project, its owner and its limits row (all defaults) come into being together. */
export async function createProject(
  db: Database,
  ownerId: string,
  input: ProjectRegisterRequest,
): Promise<ProjectSummary> {
  const id = randomUUID();
  await db.transaction(async (tx) => {
    await tx.insert(projects).values({ id, ...input });
    await tx.insert(memberships).values({ projectId: id, userId: ownerId, role: 'owner' });
    await tx.insert(projectLimits).values({ projectId: id });
  });
  return { id, ...input, disabled: false, role: 'owner' };
}

const DEFAULT_LIMITS = {
  balanceFen: 0,
  hasBalance: false,
  assistantLimit: 0,
  knowledgeLimit: 0,
  ttsCloneLimit: 0,
  concurrentCallin: 0,
  concurrentCallout: 0,
};

/** Projects made before limits existed have no row: they get the spec's defaults. */
export async function getLimits(db: Database, projectId: string) {
  const [row] = await db.select().from(projectLimits).where(eq(projectLimits.projectId, projectId)).limit(1);
  return row ?? { projectId, ...DEFAULT_LIMITS };
}

export async function getBalanceLimit(db: Database, projectId: string): Promise<BalanceLimit> {
  const l = await getLimits(db, projectId);
  return {
    assistantLimit: l.assistantLimit,
    knowledgeLimit: l.knowledgeLimit,
    ttsCloneLimit: l.ttsCloneLimit,
    hasBalance: l.hasBalance,
    concurrentCallin: l.concurrentCallin,
    concurrentCallout: l.concurrentCallout,
  };
}

export async function getBalance(db: Database, projectId: string): Promise<ProjectBalance> {
  const l = await getLimits(db, projectId);
  return { balanceFen: l.balanceFen, hasBalance: l.hasBalance };
}

export async function listMembers(db: Database, projectId: string): Promise<ProjectMember[]> {
  const rows = await db
    .select({
      userId: users.id,
      email: users.email,
      displayName: users.displayName,
      role: memberships.role,
      joinedAt: memberships.createdAt,
    })
    .from(memberships)
    .innerJoin(users, eq(users.id, memberships.userId))
    .where(eq(memberships.projectId, projectId))
    .orderBy(asc(memberships.createdAt), asc(users.email));
  return rows.map((r) => ({ ...r, joinedAt: r.joinedAt.toISOString() }));
}
