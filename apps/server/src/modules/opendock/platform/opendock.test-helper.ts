import { count, eq } from 'drizzle-orm';
import { z } from 'zod';
import { ALL_SCOPES, bearer, seedApiKey } from '../../../../test/api-keys';
import { createTestApp, loginAs, seedUser } from '../../../../test/helpers';
import { apiKeyRequests, doNotCall, memberships } from '../../../db/schema';
import { badRequest } from '../../../lib/errors';
import { ok } from '../../../lib/reply';

export { ALL_SCOPES, bearer, seedApiKey };

type BaseApp = Awaited<ReturnType<typeof createTestApp>>;
export type TestApp = Awaited<ReturnType<typeof opendockApp>>;

/**
 * The app with two tenants (A and B, each an owner), a member of A, and small open-API routes
 * only tests have: one that writes a do-not-call row per call (so a replay's missing side effect
 * can be counted), one that waits until the test releases it, and one that fails with a 500.
 */
export async function opendockApp(
  options: Parameters<typeof createTestApp>[0] & { routes?: (app: BaseApp['app']) => void } = {},
) {
  const { routes, ...appOptions } = options;
  const t = await createTestApp(appOptions);
  const { app, db } = t;
  const a = await seedUser(db, { email: 'owner-a@example.com' });
  const b = await seedUser(db, { email: 'owner-b@example.com' });
  const m = await seedUser(db, { email: 'member-a@example.com', project: null });
  await db.insert(memberships).values({ projectId: a.projectId, userId: m.userId, role: 'member' });

  const gates: Array<() => void> = [];
  let failures = 0;
  const writes = { resource: 'do_not_call', access: 'write' } as const;
  app.post(
    '/opendock/v1/test-writes',
    {
      config: { apiScope: writes },
      schema: { body: z.object({ phone: z.string().regex(/^1\d{10}$/, { error: '号码格式不正确' }) }) },
    },
    async (req) => {
      const projectId = req.apiKey!.projectId;
      if (req.body.phone === '10000000000') throw badRequest('字段 phone：该号码不能加入');
      await db
        .insert(doNotCall)
        .values({ projectId, phone: req.body.phone, source: 'manual', reason: 'test' });
      const [n] = await db.select({ n: count() }).from(doNotCall).where(eq(doNotCall.projectId, projectId));
      return ok({ phone: req.body.phone, rows: n!.n });
    },
  );
  app.post('/opendock/v1/test-slow', { config: { apiScope: writes } }, async () => {
    await new Promise<void>((resolve) => gates.push(resolve));
    return ok({ done: true });
  });
  app.post('/opendock/v1/test-fails', { config: { apiScope: writes } }, async () => {
    failures += 1;
    if (failures === 1) throw new Error('first attempt fails');
    return ok({ attempt: failures });
  });
  app.get(
    '/opendock/v1/test-reads',
    { config: { apiScope: { resource: 'calls', access: 'read' } } },
    async () => ok({ read: true }),
  );
  app.get('/opendock/v1/test-undeclared', async () => ok({ open: true }));
  // More routes of the test's own, before the first request readies the app.
  routes?.(app);

  return {
    ...t,
    a,
    b,
    member: m,
    ownerA: await loginAs(app, 'owner-a@example.com'),
    ownerB: await loginAs(app, 'owner-b@example.com'),
    memberA: await loginAs(app, 'member-a@example.com'),
    /** Lets every waiting /test-slow request finish. */
    release: () => {
      for (const open of gates.splice(0)) open();
    },
    waiting: () => gates.length,
    /** Rows of the request log once this process's buffer is written. */
    logged: async (keyId: string) => {
      await app.opendockRequestLog.flush();
      return db
        .select()
        .from(apiKeyRequests)
        .where(eq(apiKeyRequests.keyId, keyId))
        .orderBy(apiKeyRequests.at);
    },
  };
}
