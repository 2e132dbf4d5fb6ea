import type { AuditAction } from '@callpilot/contracts';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type { Database } from '../../db/client';
import { auditActor, recordAudit } from './audit.service';

/** What a route's successful answer records (see auditTrailPlugin). */
export interface RouteAudit {
  /** The action, or a function of the request (a task's start/pause/stop share one route). */
  action: AuditAction | ((req: FastifyRequest) => AuditAction);
  targetType: string;
  /** The path parameter that names the target; else the answer's `id`. */
  targetParam?: string;
  /** A short Chinese summary; by default the verb and the answer's `name`. Never a secret. */
  summary?: (req: FastifyRequest, data: Record<string, unknown> | undefined) => string;
  /** The verb of the default summary, e.g. 新增 / 修改 / 删除. */
  verb?: string;
  /** Where in the answer the target is, when not the answer itself (e.g. `{ key, secret }`). */
  subject?: (data: Record<string, unknown> | undefined) => unknown;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Set on a route whose successful answer is a change the audit log records. */
    audit?: RouteAudit;
  }
}

const nameOf = (data: Record<string, unknown> | undefined) =>
  typeof data?.name === 'string' ? data.name : typeof data?.number === 'string' ? data.number : '';

/**
 * Records the changes of the routes that declare `config.audit`, once the answer is known to be
 * a success, so every settings route records the same way with one line. The entry is written
 * before the answer leaves: a failure to record fails the request rather than losing the entry.
 * It is not in the change's transaction (the services own those); a crash between the two can
 * lose one entry, never invent one.
 */
export const auditTrailPlugin = fp(
  async (app: FastifyInstance, { db }: { db: Database }) => {
    app.addHook('preSerialization', async (req, reply, payload) => {
      const audit = req.routeOptions.config.audit;
      if (!audit || reply.statusCode >= 300) return payload;
      const answer = (payload as { data?: unknown } | null)?.data;
      const data = audit.subject ? audit.subject(answer as Record<string, unknown> | undefined) : answer;
      const record = data && typeof data === 'object' ? (data as Record<string, unknown>) : undefined;
      const params = req.params as Record<string, string | undefined>;
      const targetId =
        (audit.targetParam ? params[audit.targetParam] : undefined) ?? String(record?.id ?? '');
      const summary = audit.summary
        ? audit.summary(req, record)
        : [audit.verb, nameOf(record)].filter(Boolean).join(' ');
      const actor = auditActor(req);
      await recordAudit(db, {
        ...actor,
        projectId: actor.projectId ?? params.projectId ?? null,
        action: typeof audit.action === 'function' ? audit.action(req) : audit.action,
        targetType: audit.targetType,
        targetId,
        summary,
      });
      return payload;
    });
  },
  { name: 'audit-trail' },
);

const TASK_ACTION_AUDIT = {
  start: ['task.started', '开始'],
  resume: ['task.started', '继续'],
  pause: ['task.paused', '暂停'],
  stop: ['task.stopped', '停止'],
} as const satisfies Record<string, readonly [AuditAction, string]>;
type TaskVerb = keyof typeof TASK_ACTION_AUDIT;

/** A task's start, resume, pause and stop, from the console or the open API (`action` taken from the path). */
export const taskActionAudit = (fixed?: TaskVerb): RouteAudit => {
  const verb = (req: FastifyRequest) => fixed ?? ((req.params as { action?: TaskVerb }).action as TaskVerb);
  return {
    action: (req) => TASK_ACTION_AUDIT[verb(req)][0],
    targetType: 'task',
    targetParam: 'taskId',
    summary: (req, data) => [TASK_ACTION_AUDIT[verb(req)][1], nameOf(data)].filter(Boolean).join(' '),
  };
};
