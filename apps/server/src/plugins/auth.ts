import { API_KEY_PATTERN } from '@callpilot/contracts';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type { DatabaseHandle } from '../db/client';
import { unauthorized } from '../lib/errors';
import { SESSION_REVOKED_CHANNEL, SessionCache, UserProjectsCache } from '../modules/auth/session-cache';
import { findSessionUser, hashToken, type SessionUser } from '../modules/auth/sessions.service';

declare module 'fastify' {
  interface FastifyRequest {
    user: SessionUser | null;
  }
  interface FastifyInstance {
    /** preHandler for routes that need a logged-in user; rejects with 401 otherwise. */
    authenticate: (req: FastifyRequest, reply: FastifyReply) => Promise<void>;
    /** Ends sessions here and in every other process (see session-cache.ts for the message format). */
    revokeSessions: (message: string) => Promise<void>;
    /** The per-process memo of users' project lists, evicted by the same messages. */
    userProjects: UserProjectsCache;
  }
}

export const API_KEY_ON_CONSOLE = 'API 密钥只能用于开放接口 /opendock/v1，控制台接口需要登录';

export const bearerToken = (req: FastifyRequest): string | null => {
  const header = req.headers.authorization;
  if (!header) return null;
  const match = /^Bearer\s+(\S+)$/i.exec(header);
  return match?.[1] ?? null;
};

export const authPlugin = fp(
  async (app: FastifyInstance, { database }: { database: DatabaseHandle }) => {
    const cache = new SessionCache();
    const userProjects = new UserProjectsCache();
    const revoke = (message: string) => {
      cache.revoke(message);
      userProjects.revoke(message);
    };
    let unlisten: (() => Promise<void>) | undefined;
    app.addHook('onReady', async () => {
      unlisten = await database.listen(SESSION_REVOKED_CHANNEL, revoke);
    });
    app.addHook('onClose', async () => {
      await unlisten?.().catch(() => {});
      cache.clear();
      userProjects.clear();
    });
    app.decorate('userProjects', userProjects);

    app.decorateRequest('user', null);
    app.decorate('authenticate', async (req: FastifyRequest) => {
      const token = bearerToken(req);
      if (!token) throw unauthorized();
      // A key pasted into the wrong client: say so rather than a bare "not logged in".
      if (API_KEY_PATTERN.test(token)) throw unauthorized(API_KEY_ON_CONSOLE);
      const tokenHash = hashToken(token);
      let user = cache.get(tokenHash);
      if (!user) {
        const found = await findSessionUser(database.db, tokenHash);
        if (!found) throw unauthorized();
        cache.set(found, found.expiresAt);
        user = found;
      }
      req.user = user;
    });
    app.decorate('revokeSessions', async (message: string) => {
      // Evict here first, so this process's very next request already sees the revocation.
      revoke(message);
      await database.notify(SESSION_REVOKED_CHANNEL, message);
    });
  },
  { name: 'auth' },
);

/** For handlers behind `authenticate`: the user is there, or the hook would have answered 401. */
export const requireUser = (req: FastifyRequest): SessionUser => {
  if (!req.user) throw unauthorized();
  return req.user;
};
