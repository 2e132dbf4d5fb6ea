import fs from 'node:fs';
import path from 'node:path';
import type { AuditAction } from '@callpilot/contracts';
import { eq } from 'drizzle-orm';
import { afterEach, describe, expect, it } from 'vitest';
import { createTestApp, loginAs, PASSWORD, seedTwoProjects, seedUser } from '../../../test/helpers';
import type { Database } from '../../db/client';
import { auditLog, memberships } from '../../db/schema';
import { recordAudit } from './audit.service';
import { sweepAuditLog } from './audit-log.service';

type TestApp = Awaited<ReturnType<typeof createTestApp>>;
let current: TestApp | undefined;
afterEach(async () => {
  await current?.app.close();
  current = undefined;
});

const DAY = 24 * 3600_000;

/** An entry written as the product writes them, then dated back (only a test may edit one). */
async function seedEntry(
  db: Database,
  projectId: string,
  at: Date,
  action: AuditAction = 'trunk.changed',
  actor = 'a@example.com',
) {
  await recordAudit(db, { projectId, userId: null, actor, action, summary: '测试', ip: '10.0.0.1' });
  await db
    .update(auditLog)
    .set({ createdAt: at, summary: `测试 ${at.toISOString()}` })
    .where(eq(auditLog.summary, '测试'));
}

describe('account events', () => {
  it('records logins, failed logins, password changes and logouts with actor and IP, for the user only', async () => {
    current = await createTestApp();
    const { app, db } = current;
    await seedUser(db, { email: 'u@example.com', project: null });
    await seedUser(db, { email: 'v@example.com', project: null });

    const bad = await app.inject({
      method: 'POST',
      url: '/auth/login',
      payload: { email: 'u@example.com', password: 'wrong-pass-1' },
      headers: { 'user-agent': 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) Chrome/120.0 Safari/537.36' },
      remoteAddress: '203.0.113.7',
    });
    expect(bad.statusCode).toBe(401);
    const ok = await app.inject({
      method: 'POST',
      url: '/auth/login',
      payload: { email: 'U@example.com', password: PASSWORD },
      remoteAddress: '203.0.113.8',
    });
    const headers = { authorization: `Bearer ${ok.json().data.token}` };
    const changed = await app.inject({
      method: 'PUT',
      url: '/api/user/password',
      headers,
      payload: { oldPassword: PASSWORD, password: 'new-secret-pass-2' },
    });
    expect(changed.statusCode).toBe(200);
    // Another user's login is not the first user's business.
    await loginAs(app, 'v@example.com');

    const mine = await app.inject({ method: 'GET', url: '/api/user/audit-log', headers });
    expect(mine.statusCode).toBe(200);
    const items = mine.json().data.items as {
      action: string;
      actor: string;
      ip: string;
      actionLabel: string;
    }[];
    expect(items.map((i) => i.action)).toEqual(['auth.password_changed', 'auth.login', 'auth.login_failed']);
    expect(items[1]).toMatchObject({ actor: 'u@example.com', ip: '203.0.113.8', actionLabel: '登录' });
    expect(items[2]).toMatchObject({ actor: 'u@example.com', ip: '203.0.113.7', actionLabel: '登录失败' });
    expect(JSON.stringify(items)).not.toContain('wrong-pass-1');
    expect(JSON.stringify(await db.select().from(auditLog))).not.toMatch(
      /wrong-pass-1|new-secret-pass-2|secret-pass-1/,
    );

    // A failed login for an account that does not exist names no user and is shown to no one.
    await app.inject({
      method: 'POST',
      url: '/auth/login',
      payload: { email: 'ghost@example.com', password: 'x-pass-123' },
    });
    const [ghost] = await db.select().from(auditLog).where(eq(auditLog.actor, 'ghost@example.com'));
    expect(ghost).toMatchObject({ userId: null, projectId: null, action: 'auth.login_failed' });

    const out = await app.inject({ method: 'GET', url: '/auth/logout', headers });
    expect(out.statusCode).toBe(200);
    const again = await loginAs(app, 'u@example.com', 'new-secret-pass-2');
    const after = await app.inject({
      method: 'GET',
      url: '/api/user/audit-log?action=auth.logout',
      headers: again,
    });
    expect(after.json().data).toMatchObject({
      total: 1,
      items: [{ action: 'auth.logout', actor: 'u@example.com' }],
    });
  });
});

describe('project audit log', () => {
  it('is for owners and admins only; another project’s log is 403', async () => {
    current = await createTestApp();
    const { app, db } = current;
    const t = await seedTwoProjects(db, app);
    const url = `/api/project/${t.a.projectId}/audit-log`;
    expect((await app.inject({ method: 'GET', url, headers: t.owner })).statusCode).toBe(200);
    const member = await app.inject({ method: 'GET', url, headers: t.memberHeaders });
    expect(member.statusCode).toBe(403);
    expect(member.json().message).toBe('仅项目所有者和管理员可查看操作日志');
    expect(
      (await app.inject({ method: 'GET', url: `${url}/export`, headers: t.memberHeaders })).statusCode,
    ).toBe(403);
    expect((await app.inject({ method: 'GET', url, headers: t.outsider })).statusCode).toBe(403);
    expect((await app.inject({ method: 'GET', url: `${url}/export`, headers: t.outsider })).statusCode).toBe(
      403,
    );

    await db.update(memberships).set({ role: 'admin' }).where(eq(memberships.userId, t.member.userId));
    expect((await app.inject({ method: 'GET', url, headers: t.memberHeaders })).statusCode).toBe(200);
  });

  it('filters by action, actor and time, paginates on the server, and exports the filtered rows', async () => {
    current = await createTestApp();
    const { app, db } = current;
    const t = await seedTwoProjects(db, app);
    const now = Date.now();
    for (let i = 0; i < 25; i++) await seedEntry(db, t.a.projectId, new Date(now - (i + 1) * 60_000));
    await seedEntry(db, t.a.projectId, new Date(now - 3 * DAY), 'api_key.created', 'boss@example.com');
    await seedEntry(db, t.b.projectId, new Date(now - 60_000), 'api_key.created', 'boss@example.com');
    const url = `/api/project/${t.a.projectId}/audit-log`;

    const page2 = await app.inject({ method: 'GET', url: `${url}?page=2&pageSize=10`, headers: t.owner });
    expect(page2.json().data).toMatchObject({ total: 26, page: 2, pageSize: 10 });
    expect(page2.json().data.items).toHaveLength(10);
    expect(page2.json().data.items[0].summary).toBe(`测试 ${new Date(now - 11 * 60_000).toISOString()}`);

    const byAction = await app.inject({
      method: 'GET',
      url: `${url}?action=api_key.created`,
      headers: t.owner,
    });
    expect(byAction.json().data).toMatchObject({
      total: 1,
      items: [{ actor: 'boss@example.com', actionLabel: '创建 API 密钥' }],
    });
    const byActor = await app.inject({ method: 'GET', url: `${url}?actor=BOSS`, headers: t.owner });
    expect(byActor.json().data.total).toBe(1);
    const from = new Date(now - 5 * 60_000 - 1).toISOString();
    const to = new Date(now - 2 * 60_000 + 1).toISOString();
    const byTime = await app.inject({ method: 'GET', url: `${url}?from=${from}&to=${to}`, headers: t.owner });
    expect(byTime.json().data.total).toBe(4);

    const reversed = await app.inject({
      method: 'GET',
      url: `${url}?from=${to}&to=${from}`,
      headers: t.owner,
    });
    expect(reversed.statusCode).toBe(400);
    expect(reversed.json().message).toContain('结束时间不能早于开始时间');
    const unknown = await app.inject({ method: 'GET', url: `${url}?action=audit.deleted`, headers: t.owner });
    expect(unknown.statusCode).toBe(400);
    expect(unknown.json().message).toContain('操作类型不支持');

    const file = await app.inject({ method: 'GET', url: `${url}/export?actor=boss`, headers: t.owner });
    expect(file.statusCode).toBe(200);
    expect(file.headers['content-type']).toContain('text/csv');
    expect(file.headers['content-disposition']).toContain(encodeURIComponent('操作日志-'));
    const lines = file.body
      .replace(/^\uFEFF/, '')
      .trim()
      .split('\r\n');
    expect(lines[0]).toBe('时间,操作人,操作,对象类型,对象,说明,IP');
    expect(lines).toHaveLength(2);
    expect(lines[1]).toContain('boss@example.com,创建 API 密钥');
    expect(lines[1]).toContain('10.0.0.1');

    // The export itself is on record, with the filter that was used.
    const exported = await app.inject({
      method: 'GET',
      url: `${url}?action=audit.exported`,
      headers: t.owner,
    });
    expect(exported.json().data.items[0]).toMatchObject({
      actor: 'owner@example.com',
      summary: '导出 1 条',
      detail: { filters: { actor: 'boss' }, rows: 1 },
    });
  });
});

describe('retention', () => {
  it('the sweep deletes entries older than 180 days and keeps the rest', async () => {
    current = await createTestApp();
    const { db } = current;
    const { projectId } = await seedUser(db, { email: 'r@example.com' });
    const now = new Date('2026-06-30T00:00:00Z');
    await seedEntry(db, projectId, new Date(now.getTime() - 181 * DAY));
    await seedEntry(db, projectId, new Date(now.getTime() - 179 * DAY));
    await sweepAuditLog(db, now);
    const left = await db.select().from(auditLog);
    expect(left).toHaveLength(1);
    expect(left[0]!.createdAt.toISOString()).toBe(new Date(now.getTime() - 179 * DAY).toISOString());
  });
});

describe('entries cannot be edited', () => {
  it('no route but the reads is about the audit log, and only the retention sweep deletes or updates it', async () => {
    current = await createTestApp();
    const doc = (await current.app.inject({ method: 'GET', url: '/docs/json' })).json() as {
      paths: Record<string, Record<string, unknown>>;
    };
    const auditRoutes = Object.entries(doc.paths)
      .filter(([p]) => /audit/i.test(p))
      .flatMap(([p, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${p}`));
    expect(auditRoutes.sort()).toEqual([
      'GET /api/project/{projectId}/audit-log',
      'GET /api/project/{projectId}/audit-log/export',
      'GET /api/user/audit-log',
    ]);

    // Every other route could only touch the table through code, so the code is what is checked:
    // besides inserts (recordAudit), the one write anywhere in the server is the retention sweep.
    const root = path.resolve(__dirname, '../..');
    const writers: string[] = [];
    const walk = (dir: string) => {
      for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
        const full = path.join(dir, entry.name);
        if (entry.isDirectory()) walk(full);
        else if (/\.ts$/.test(entry.name) && !/\.test\.ts$/.test(entry.name)) {
          const text = fs.readFileSync(full, 'utf8');
          const hits =
            text.match(/\.(update|delete)\(\s*auditLog\b|(UPDATE|DELETE FROM|TRUNCATE)\s+"?audit_log/gi) ??
            [];
          for (const hit of hits) writers.push(`${path.relative(root, full)}: ${hit}`);
        }
      }
    };
    walk(root);
    expect(writers).toEqual(['modules/audit/audit-log.service.ts: .delete(auditLog']);
  });
});
