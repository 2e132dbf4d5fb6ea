import { type CurrentUser, canManageProject } from '@callpilot/contracts';
import { asc, eq } from 'drizzle-orm';
import type { Database } from '../../db/client';
import { memberships, projects, users } from '../../db/schema';
import type { CachedProject, UserProjectsCache } from '../auth/session-cache';
import type { SessionUser } from '../auth/sessions.service';

/** The spec's user-store: the first project (the oldest membership) is the current one. */
export async function getCurrentUser(
  db: Database,
  user: SessionUser,
  cache?: UserProjectsCache,
): Promise<CurrentUser> {
  let rows = cache?.get(user.id);
  if (!rows) {
    rows = await loadProjects(db, user.id);
    // Set on a miss only: a TTL that slid on every hit would never bound a missed revocation.
    cache?.set(user.id, rows);
  }
  const first = rows[0];
  return {
    isOwnerOrAdmin: first !== undefined && canManageProject(first.role),
    id: user.id,
    email: user.email,
    displayName: user.displayName,
    profile: user.profile,
    projects: rows,
    role: first?.role ?? null,
  };
}

function loadProjects(db: Database, userId: string): Promise<CachedProject[]> {
  return db
    .select({
      id: projects.id,
      name: projects.name,
      company: projects.company,
      industry: projects.industry,
      disabled: projects.disabled,
      role: memberships.role,
    })
    .from(memberships)
    .innerJoin(projects, eq(projects.id, memberships.projectId))
    .where(eq(memberships.userId, userId))
    .orderBy(asc(memberships.createdAt), asc(projects.id));
}

export async function updateProfile(
  db: Database,
  user: SessionUser,
  input: { displayName: string; profile: string },
): Promise<CurrentUser> {
  await db
    .update(users)
    .set({ displayName: input.displayName, profile: input.profile, updatedAt: new Date() })
    .where(eq(users.id, user.id));
  return getCurrentUser(db, { ...user, ...input });
}
