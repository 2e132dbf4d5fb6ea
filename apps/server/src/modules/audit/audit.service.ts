import { randomUUID } from 'node:crypto';
import type { AuditAction } from '@callpilot/contracts';
import type { FastifyRequest } from 'fastify';
import type { Database } from '../../db/client';
import { auditLog } from '../../db/schema';
// The API-key plugin's request declaration (req.apiKey), for programs that reach this file alone.
import type {} from '../../plugins/api-key-auth';

export { AUDIT_RETENTION_DAYS } from '@callpilot/contracts';

export interface AuditEntry {
  projectId: string | null;
  userId: string | null;
  actor: string;
  action: AuditAction;
  targetType?: string;
  targetId?: string;
  summary?: string;
  detail?: Record<string, unknown>;
  ip?: string;
}

/**
 * Appends one entry. Call it after the change it records has been written (inside the same
 * transaction when there is one, so a rolled-back change leaves no entry). Never put a
 * secret in `summary` or `detail`: entries are shown and exported.
 */
export async function recordAudit(db: Database, entry: AuditEntry) {
  await db.insert(auditLog).values({
    id: randomUUID(),
    projectId: entry.projectId,
    userId: entry.userId,
    actor: entry.actor,
    action: entry.action,
    targetType: entry.targetType ?? '',
    targetId: entry.targetId ?? '',
    summary: entry.summary ?? '',
    detail: entry.detail ?? {},
    ip: entry.ip ?? '',
  });
}

/**
 * The actor, project and IP of an authenticated request, for `recordAudit`: the console user, or
 * on the open API the key by its name (never the key itself, which is a secret).
 */
export const auditActor = (req: FastifyRequest) =>
  req.apiKey
    ? { projectId: req.apiKey.projectId, userId: null, actor: `API 密钥：${req.apiKey.name}`, ip: req.ip }
    : {
        projectId: req.project?.id ?? null,
        userId: req.user?.id ?? null,
        actor: req.user?.email ?? '',
        ip: req.ip,
      };
