import { and, eq } from 'drizzle-orm';
import { afterEach, describe, expect, it } from 'vitest';
import { createTestApp, loginAs, PASSWORD, seedUser, tableCounts } from '../../../test/helpers';
import { auditLog, memberships, projectInvitations } from '../../db/schema';

type TestApp = Awaited<ReturnType<typeof createTestApp>>;
let t: TestApp | undefined;
afterEach(async () => {
  await t?.app.close();
  t = undefined;
});

const tokenOf = (text: string | undefined) => {
  const token = /\/invite\/([A-Za-z0-9_-]+)/.exec(text ?? '')?.[1];
  if (!token) throw new Error(`no invitation link in: ${text}`);
  return token;
};

async function setup() {
  t = await createTestApp();
  const { app, db } = t;
  const a = await seedUser(db, { email: 'owner@example.com', project: '甲项目' });
  const admin = await seedUser(db, { email: 'admin@example.com', project: null });
  await db.insert(memberships).values({ projectId: a.projectId, userId: admin.userId, role: 'admin' });
  const b = await seedUser(db, { email: 'other@example.com', project: '乙项目' });
  const as = {
    owner: await loginAs(app, 'owner@example.com'),
    admin: await loginAs(app, 'admin@example.com'),
    other: await loginAs(app, 'other@example.com'),
  };
  const call = (
    method: 'GET' | 'POST' | 'PUT' | 'DELETE',
    url: string,
    headers: Record<string, string> | undefined,
    payload?: object,
  ) => app.inject({ method, url, ...(headers ? { headers } : {}), ...(payload ? { payload } : {}) });
  const p = (path: string, projectId = a.projectId) => `/api/project/${projectId}/${path}`;
  const role = async (userId: string, projectId = a.projectId) =>
    (
      await db
        .select({ role: memberships.role })
        .from(memberships)
        .where(and(eq(memberships.projectId, projectId), eq(memberships.userId, userId)))
    )[0]?.role;
  const audits = async () =>
    (await db.select().from(auditLog).where(eq(auditLog.projectId, a.projectId))).map((r) => r.action);
  return { ...t, a, admin, b, as, call, p, role, audits };
}

describe('invitations', { timeout: 60_000 }, () => {
  it('invites by e-mail; the invitee registers, sees the invitation and joins once', async () => {
    const s = await setup();
    const invited = await s.call('POST', s.p('invitations'), s.as.admin, {
      email: ' New@Example.com ',
      role: 'readonly',
    });
    expect(invited.statusCode, invited.body).toBe(200);
    const data = invited.json().data;
    expect(data).toMatchObject({
      email: 'new@example.com',
      role: 'readonly',
      invitedBy: 'admin@example.com',
    });
    const days = (Date.parse(data.expiresAt) - Date.parse(data.createdAt)) / 86_400_000;
    expect(days).toBe(7);

    const mail = s.emails.at(-1)!;
    expect(mail.to).toBe('new@example.com');
    expect(mail.subject).toContain('甲项目');
    expect(mail.text).toContain('只读');
    const token = tokenOf(mail.text);
    expect(data.link).toContain(`/invite/${token}`);
    // Only the hash is kept.
    const [row] = await s.db.select().from(projectInvitations);
    expect(row!.tokenHash).not.toContain(token);

    const listed = await s.call('GET', s.p('invitations'), s.as.owner);
    expect(listed.json().data).toMatchObject([{ id: data.id, email: 'new@example.com' }]);

    const preview = await s.call('GET', `/api/invitations/${token}`, undefined);
    expect(preview.json().data).toMatchObject({
      projectName: '甲项目',
      role: 'readonly',
      email: 'n***@example.com',
      status: 'pending',
    });

    // An unknown address registers through the normal sign-up, then accepts.
    const reg = await s.call('POST', '/auth/register', undefined, {
      email: 'new@example.com',
      password: PASSWORD,
      displayName: '新人',
    });
    expect(reg.statusCode, reg.body).toBe(200);
    const asNew = { authorization: `Bearer ${reg.json().data.token}` };
    const accepted = await s.call('POST', `/api/invitations/${token}/accept`, asNew);
    expect(accepted.statusCode, accepted.body).toBe(200);
    expect(accepted.json().data).toMatchObject({ projectId: s.a.projectId, role: 'readonly' });
    const me = await s.call('GET', '/api/user/current', asNew);
    expect(me.json().data).toMatchObject({
      role: 'readonly',
      projects: [{ id: s.a.projectId, name: '甲项目' }],
    });

    const again = await s.call('POST', `/api/invitations/${token}/accept`, asNew);
    expect(again.statusCode).toBe(400);
    expect(again.json().message).toBe('该邀请已被使用');
    expect((await s.call('GET', `/api/invitations/${token}`, undefined)).json().data.status).toBe('accepted');
    expect((await s.call('GET', s.p('invitations'), s.as.owner)).json().data).toEqual([]);

    // Re-inviting someone who is already a member names the rule.
    const dup = await s.call('POST', s.p('invitations'), s.as.owner, {
      email: 'NEW@example.com',
      role: 'member',
    });
    expect(dup.statusCode).toBe(400);
    expect(dup.json().message).toBe('该邮箱已是项目成员，不能重复邀请');

    expect(await s.audits()).toEqual(expect.arrayContaining(['member.invited', 'member.joined']));
  });

  it('refuses an expired, revoked or forwarded link with a clear reason and changes nothing', async () => {
    const s = await setup();
    const invite = async (email: string) => {
      const res = await s.call('POST', s.p('invitations'), s.as.owner, { email, role: 'member' });
      expect(res.statusCode, res.body).toBe(200);
      return { id: res.json().data.id as string, token: tokenOf(s.emails.at(-1)!.text) };
    };
    const invitee = await seedUser(s.db, { email: 'invitee@example.com', project: null });
    const asInvitee = await loginAs(s.app, 'invitee@example.com');

    // Expired: the row's expiry moved to the past, as seven days later.
    const old = await invite('invitee@example.com');
    await s.db
      .update(projectInvitations)
      .set({ expiresAt: new Date(Date.now() - 1000) })
      .where(eq(projectInvitations.id, old.id));
    expect((await s.call('GET', `/api/invitations/${old.token}`, undefined)).json().data.status).toBe(
      'expired',
    );
    const expired = await s.call('POST', `/api/invitations/${old.token}/accept`, asInvitee);
    expect(expired.statusCode).toBe(400);
    expect(expired.json().message).toBe('邀请已过期，请联系项目管理员重新邀请');

    // Revoked.
    const second = await invite('invitee@example.com');
    const revoked = await s.call('DELETE', s.p(`invitations/${second.id}`), s.as.admin);
    expect(revoked.statusCode, revoked.body).toBe(200);
    const refused = await s.call('POST', `/api/invitations/${second.token}/accept`, asInvitee);
    expect(refused.json().message).toBe('该邀请已被撤销');

    // Forwarded to another account.
    const third = await invite('invitee@example.com');
    const before = await tableCounts(s.db);
    const wrong = await s.call('POST', `/api/invitations/${third.token}/accept`, s.as.other);
    expect(wrong.statusCode).toBe(403);
    expect(wrong.json().message).toBe('该邀请发给 i***@example.com，请使用该邮箱的账号登录后接受');
    expect(await tableCounts(s.db)).toEqual(before);
    expect(await s.role(invitee.userId)).toBeUndefined();

    // 复制链接 issues a new link; the mailed one stops working, the new one works.
    const renewed = await s.call('POST', s.p(`invitations/${third.id}/link`), s.as.owner);
    expect(renewed.statusCode, renewed.body).toBe(200);
    const newToken = tokenOf(renewed.json().data.link);
    expect((await s.call('GET', `/api/invitations/${third.token}`, undefined)).statusCode).toBe(404);
    expect((await s.call('POST', `/api/invitations/${newToken}/accept`, asInvitee)).statusCode).toBe(200);
    expect(await s.role(invitee.userId)).toBe('member');

    const unknown = await s.call('GET', `/api/invitations/${'x'.repeat(43)}`, undefined);
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json().message).toBe('邀请链接无效');
    const malformed = await s.call('GET', '/api/invitations/short', undefined);
    expect(malformed.statusCode).toBe(400);
    expect(malformed.json().message).toContain('邀请链接不正确');
    expect(await s.audits()).toContain('member.invitation_revoked');
  });

  it('validates the invitation form with field messages', async () => {
    const s = await setup();
    const before = await tableCounts(s.db);
    const badEmail = await s.call('POST', s.p('invitations'), s.as.owner, { email: 'nope', role: 'member' });
    expect(badEmail.statusCode).toBe(400);
    expect(badEmail.json().message).toContain('邮箱格式不正确');
    const owner = await s.call('POST', s.p('invitations'), s.as.owner, {
      email: 'x@example.com',
      role: 'owner',
    });
    expect(owner.statusCode).toBe(400);
    expect(owner.json().message).toContain('角色只能是管理员、成员或只读');
    expect(await tableCounts(s.db)).toEqual(before);
  });
});

describe('member management', { timeout: 60_000 }, () => {
  it('changes roles and removes members within the owner rules', async () => {
    const s = await setup();
    const m = await seedUser(s.db, { email: 'm@example.com', project: null });
    await s.db.insert(memberships).values({ projectId: s.a.projectId, userId: m.userId, role: 'member' });
    const asM = await loginAs(s.app, 'm@example.com');

    // A member cannot manage members.
    const byMember = await s.call('PUT', s.p(`members/${s.admin.userId}`), asM, { role: 'readonly' });
    expect(byMember.statusCode).toBe(403);
    expect(byMember.json().message).toBe('仅项目所有者或管理员可以管理成员');

    // Admin: may change a member, may not touch an owner nor make one.
    expect(
      (await s.call('PUT', s.p(`members/${m.userId}`), s.as.admin, { role: 'readonly' })).statusCode,
    ).toBe(200);
    expect(await s.role(m.userId)).toBe('readonly');
    const vsOwner = await s.call('PUT', s.p(`members/${s.a.userId}`), s.as.admin, { role: 'member' });
    expect(vsOwner.statusCode).toBe(403);
    expect(vsOwner.json().message).toBe('管理员不能修改或移除所有者');
    expect((await s.call('DELETE', s.p(`members/${s.a.userId}`), s.as.admin)).statusCode).toBe(403);
    const promote = await s.call('PUT', s.p(`members/${m.userId}`), s.as.admin, { role: 'owner' });
    expect(promote.statusCode).toBe(403);
    expect(promote.json().message).toBe('只有所有者可以将成员设为所有者');

    // The last owner can be neither demoted nor removed nor leave.
    const demote = await s.call('PUT', s.p(`members/${s.a.userId}`), s.as.owner, { role: 'admin' });
    expect(demote.statusCode).toBe(400);
    expect(demote.json().message).toBe('项目至少需要保留一名所有者：请先将其他成员设为所有者');
    expect((await s.call('DELETE', s.p(`members/${s.a.userId}`), s.as.owner)).statusCode).toBe(400);
    const leave = await s.call('DELETE', s.p('membership'), s.as.owner);
    expect(leave.statusCode).toBe(400);
    expect(await s.role(s.a.userId)).toBe('owner');

    // With a second owner, the first may step down.
    expect(
      (await s.call('PUT', s.p(`members/${s.admin.userId}`), s.as.owner, { role: 'owner' })).statusCode,
    ).toBe(200);
    expect(
      (await s.call('PUT', s.p(`members/${s.a.userId}`), s.as.owner, { role: 'admin' })).statusCode,
    ).toBe(200);
    expect(await s.role(s.a.userId)).toBe('admin');

    // Read-only may still leave; a removed member loses access at once.
    expect((await s.call('DELETE', s.p('membership'), asM)).statusCode).toBe(200);
    expect(await s.role(m.userId)).toBeUndefined();
    expect((await s.call('GET', s.p('members'), asM)).statusCode).toBe(403);
    expect((await s.call('GET', '/api/user/current', asM)).json().data).toMatchObject({
      projects: [],
      role: null,
    });

    const bad = await s.call('PUT', s.p(`members/${s.a.userId}`), s.as.admin, { role: 'boss' });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().message).toContain('角色只能是所有者、管理员、成员或只读');

    expect(await s.audits()).toEqual(expect.arrayContaining(['member.role_changed', 'member.removed']));
    const changed = (
      await s.db.select().from(auditLog).where(eq(auditLog.action, 'member.role_changed'))
    )[0]!;
    expect(changed).toMatchObject({
      actor: 'admin@example.com',
      targetId: m.userId,
      summary: 'm@example.com：成员 → 只读',
    });
  });

  it('keeps projects apart: foreign ids 404 through your project, foreign paths 403', async () => {
    const s = await setup();
    const foreign = await s.call('POST', s.p('invitations', s.b.projectId), s.as.other, {
      email: 'x@example.com',
      role: 'member',
    });
    const foreignInvitation = foreign.json().data.id as string;
    const before = await tableCounts(s.db);

    for (const [method, path] of [
      ['DELETE', `invitations/${foreignInvitation}`],
      ['POST', `invitations/${foreignInvitation}/link`],
      ['DELETE', `members/${s.b.userId}`],
    ] as const) {
      const res = await s.call(method, s.p(path), s.as.owner);
      expect(res.statusCode, `${method} ${path}`).toBe(404);
    }
    const role = await s.call('PUT', s.p(`members/${s.b.userId}`), s.as.owner, { role: 'member' });
    expect(role.statusCode).toBe(404);
    expect(role.json().message).toBe('成员不存在');

    for (const [method, path] of [
      ['GET', 'invitations'],
      ['GET', 'members'],
      ['POST', 'invitations'],
      ['DELETE', `members/${s.b.userId}`],
      ['DELETE', 'membership'],
    ] as const) {
      const res = await s.call(
        method,
        s.p(path, s.b.projectId),
        s.as.owner,
        method === 'POST' ? { email: 'y@example.com', role: 'member' } : undefined,
      );
      expect(res.statusCode, `${method} ${path}`).toBe(403);
    }
    expect(await tableCounts(s.db)).toEqual(before);
    expect((await s.call('GET', s.p('invitations', s.b.projectId), s.as.other)).json().data).toHaveLength(1);
  });
});
