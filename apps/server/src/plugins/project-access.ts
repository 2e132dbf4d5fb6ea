import { canManageProject, type ProjectRole } from '@callpilot/contracts';
import { and, eq } from 'drizzle-orm';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type { Database } from '../db/client';
import { memberships, projects } from '../db/schema';
import { AppError, forbidden } from '../lib/errors';
// The auth plugin's declarations (app.authenticate, req.user), for programs that reach this file alone.
import type {} from './auth';

export interface ProjectAccess {
  id: string;
  name: string;
  disabled: boolean;
  role: ProjectRole;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Set on every /api/project/:projectId/... route once membership is checked. */
    project: ProjectAccess | null;
  }
  interface FastifyContextConfig {
    /**
     * The few project routes the console needs to load while a project is disabled (its
     * balance and limits). Every other project route is a data route and answers
     * "Project is disabled" then.
     */
    allowDisabledProject?: boolean;
    /**
     * A non-GET project route that changes nothing (a search, a hit test, a simulation, an
     * export, a read sent as POST): read-only members may call it. Every other write answers
     * 403 to them here, so a route added later is closed to read-only without remembering to.
     */
    readOnlySafe?: boolean;
  }
}

export const PROJECT_ROUTE_PREFIX = '/api/project/:projectId/';
export const PROJECT_DISABLED_MESSAGE = 'Project is disabled';

export const READ_ONLY_MESSAGE = '只读成员不能修改项目数据';
const READ_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

export const projectDisabled = () => new AppError(403, 'PROJECT_DISABLED', PROJECT_DISABLED_MESSAGE);

/**
 * Guards every route under /api/project/:projectId/ by its path, so a module added later is
 * covered without remembering to opt in. It runs at onRequest, before body validation, so an
 * outsider learns nothing (not even whether a project exists) from validation messages.
 */
export const projectAccessPlugin = fp(
  async (app: FastifyInstance, { db }: { db: Database }) => {
    app.decorateRequest('project', null);
    app.addHook('onRequest', async (req, reply) => {
      if (!req.routeOptions.url?.startsWith(PROJECT_ROUTE_PREFIX)) return;
      await app.authenticate(req, reply);
      const projectId = (req.params as { projectId?: string }).projectId ?? '';
      const [row] = await db
        .select({ id: projects.id, name: projects.name, disabled: projects.disabled, role: memberships.role })
        .from(memberships)
        .innerJoin(projects, eq(projects.id, memberships.projectId))
        .where(and(eq(memberships.projectId, projectId), eq(memberships.userId, req.user!.id)))
        .limit(1);
      // Unknown and foreign projects get the same answer: existence is not revealed.
      if (!row) throw forbidden('无权访问该项目');
      req.project = row;
      if (row.disabled && !req.routeOptions.config.allowDisabledProject) throw projectDisabled();
      if (row.role === 'readonly' && !READ_METHODS.has(req.method) && !req.routeOptions.config.readOnlySafe)
        throw forbidden(READ_ONLY_MESSAGE);
    });
  },
  { name: 'project-access', dependencies: ['auth'] },
);

/** For handlers of project routes: the checked project. */
export const requireProject = (req: FastifyRequest): ProjectAccess => {
  if (!req.project) throw forbidden('无权访问该项目');
  return req.project;
};

/** For settings routes (members, trunks, numbers, keys, webhooks, providers): owner and admin only. */
export const requireManager = (project: ProjectAccess, message: string): ProjectAccess => {
  if (!canManageProject(project.role)) throw forbidden(message);
  return project;
};
