import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type { DatabaseHandle } from '../db/client';
import { unauthorized } from '../lib/errors';
import { SESSION_REVOKED_CHANNEL, SessionCache } from '../modules/auth/session-cache';
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
  }
}

export const bearerToken = (req: FastifyRequest): string | null => {
  const header = req.headers.authorization;
  if (!header) return null;
  const match = /^Bearer\s+(\S+)$/i.exec(header);
  return match?.[1] ?? null;
};

export const authPlugin = fp(
  async (app: FastifyInstance, { database }: { database: DatabaseHandle }) => {
    const cache = new SessionCache();
    let unlisten: (() => Promise<void>) | undefined;
    app.addHook('onReady', async () => {
      unlisten = await database.listen(SESSION_REVOKED_CHANNEL, (message) => cache.revoke(message));
    });
    app.addHook('onClose', async () => {
      await unlisten?.().catch(() => {});
      cache.clear();
    });

    app.decorateRequest('user', null);
    app.decorate('authenticate', async (req: FastifyRequest) => {
      const token = bearerToken(req);
      if (!token) throw unauthorized();
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
      cache.revoke(message);
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
