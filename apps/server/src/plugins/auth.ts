import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type { Database } from '../db/client';
import { unauthorized } from '../lib/errors';
import { findSessionUser, type SessionUser } from '../modules/auth/sessions.service';

declare module 'fastify' {
  interface FastifyRequest {
    user: SessionUser | null;
  }
  interface FastifyInstance {
    /** preHandler for routes that need a logged-in user; rejects with 401 otherwise. */
    authenticate: (req: FastifyRequest, reply: FastifyReply) => Promise<void>;
  }
}

export const bearerToken = (req: FastifyRequest): string | null => {
  const header = req.headers.authorization;
  if (!header) return null;
  const match = /^Bearer\s+(\S+)$/i.exec(header);
  return match?.[1] ?? null;
};

export const authPlugin = fp(
  async (app: FastifyInstance, opts: { db: Database }) => {
    app.decorateRequest('user', null);
    app.decorate('authenticate', async (req: FastifyRequest) => {
      const token = bearerToken(req);
      if (!token) throw unauthorized();
      const user = await findSessionUser(opts.db, token);
      if (!user) throw unauthorized();
      req.user = user;
    });
  },
  { name: 'auth' },
);

/** For handlers behind `authenticate`: the user is there, or the hook would have answered 401. */
export const requireUser = (req: FastifyRequest): SessionUser => {
  if (!req.user) throw unauthorized();
  return req.user;
};
