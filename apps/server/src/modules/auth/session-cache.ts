import type { ProjectRole } from '@callpilot/contracts';
import type { SessionUser } from './sessions.service';

export const SESSION_REVOKED_CHANNEL = 'session_revoked';

/** What a revocation names: one token, or every session of one user (password change, account removal). */
export const revokedToken = (tokenHash: string) => `token:${tokenHash}`;
export const revokedUser = (userId: string) => `user:${userId}`;

/**
 * Bearer-token lookups are the one query every authenticated request makes; caching them
 * briefly halves the database work of a typical request. Revocations travel over Postgres
 * NOTIFY, so a logout or a password reset in any process evicts the entry everywhere at once;
 * the short TTL only bounds what a missed notification (a reconnecting listener) could leave.
 */
export class SessionCache {
  private readonly entries = new Map<string, { user: SessionUser; until: number }>();

  constructor(
    private readonly ttlMs = 30_000,
    private readonly maxEntries = 10_000,
  ) {}

  get(tokenHash: string, now = Date.now()): SessionUser | undefined {
    const hit = this.entries.get(tokenHash);
    if (!hit) return undefined;
    if (hit.until <= now) {
      this.entries.delete(tokenHash);
      return undefined;
    }
    return hit.user;
  }

  set(user: SessionUser, expiresAt: Date, now = Date.now()) {
    if (this.entries.size >= this.maxEntries) {
      // Maps iterate in insertion order: dropping the first entry drops the oldest.
      const oldest = this.entries.keys().next().value;
      if (oldest !== undefined) this.entries.delete(oldest);
    }
    this.entries.set(user.tokenHash, { user, until: Math.min(now + this.ttlMs, expiresAt.getTime()) });
  }

  /** Applies a revocation message (see revokedToken / revokedUser). */
  revoke(message: string) {
    if (message.startsWith('token:')) {
      this.entries.delete(message.slice('token:'.length));
    } else if (message.startsWith('user:')) {
      const userId = message.slice('user:'.length);
      for (const [hash, entry] of this.entries) if (entry.user.id === userId) this.entries.delete(hash);
    }
  }

  clear() {
    this.entries.clear();
  }
}

/** A project's name, flags or members changed: every cached project list that holds it is stale. */
export const revokedProject = (projectId: string) => `project:${projectId}`;

export interface CachedProject {
  id: string;
  name: string;
  company: string;
  industry: string;
  disabled: boolean;
  role: ProjectRole;
}

/**
 * The projects of a user, as /api/user/current answers them: the console asks on every page load,
 * so a short per-process memo spares the join. It travels with the session revocations:
 * `user:<id>` (profile, membership or password changes) and `project:<id>` (a project changed,
 * e.g. disabled by an operator) evict it in every process.
 */
export class UserProjectsCache {
  private readonly entries = new Map<string, { projects: CachedProject[]; until: number }>();

  constructor(
    private readonly ttlMs = 30_000,
    private readonly maxEntries = 10_000,
  ) {}

  get(userId: string, now = Date.now()): CachedProject[] | undefined {
    const hit = this.entries.get(userId);
    if (!hit) return undefined;
    if (hit.until <= now) {
      this.entries.delete(userId);
      return undefined;
    }
    return hit.projects;
  }

  set(userId: string, projects: CachedProject[], now = Date.now()) {
    if (this.entries.size >= this.maxEntries) {
      const oldest = this.entries.keys().next().value;
      if (oldest !== undefined) this.entries.delete(oldest);
    }
    this.entries.set(userId, { projects, until: now + this.ttlMs });
  }

  revoke(message: string) {
    if (message.startsWith('user:')) {
      this.entries.delete(message.slice('user:'.length));
    } else if (message.startsWith('project:')) {
      const projectId = message.slice('project:'.length);
      for (const [userId, entry] of this.entries) {
        if (entry.projects.some((project) => project.id === projectId)) this.entries.delete(userId);
      }
    }
  }

  clear() {
    this.entries.clear();
  }
}
