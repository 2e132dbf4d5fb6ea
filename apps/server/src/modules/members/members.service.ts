import { createHash, randomBytes, randomUUID } from 'node:crypto';
import {
  INVITATION_TTL_DAYS,
  type InvitationAccepted,
  type InvitationLink,
  type InvitationPreview,
  type InviteMemberRequest,
  type ProjectInvitation,
  type ProjectRole,
  ROLE_LABELS,
} from '@callpilot/contracts';
import { and, asc, eq, gt, isNull } from 'drizzle-orm';
import type { Database } from '../../db/client';
import { memberships, projectInvitations, projects, users } from '../../db/schema';
import { AppError, badRequest, forbidden, notFound } from '../../lib/errors';
import { type ProjectAccess, requireManager } from '../../plugins/project-access';
import type { Providers } from '../../providers';
import { recordAudit } from '../audit/audit.service';

export const INVITATION_TTL_MS = INVITATION_TTL_DAYS * 24 * 60 * 60 * 1000;

export const memberMessages = {
  manage: '仅项目所有者或管理员可以管理成员',
  alreadyMember: '该邮箱已是项目成员，不能重复邀请',
  invitationMissing: '邀请不存在或已失效',
  memberMissing: '成员不存在',
  adminVsOwner: '管理员不能修改或移除所有者',
  onlyOwnerPromotes: '只有所有者可以将成员设为所有者',
  lastOwner: '项目至少需要保留一名所有者：请先将其他成员设为所有者',
  invalidLink: '邀请链接无效',
  expired: '邀请已过期，请联系项目管理员重新邀请',
  accepted: '该邀请已被使用',
  revoked: '该邀请已被撤销',
  alreadyJoined: '你已是该项目的成员',
} as const;

/** Only the hash is stored: a leaked table holds no usable link. */
const hashToken = (token: string) => createHash('sha256').update(`invite:${token}`).digest('hex');

export const invitationUrl = (baseUrl: string, token: string) =>
  `${baseUrl.replace(/\/+$/, '')}/invite/${token}`;

/** a***@example.com: enough for the visitor to know which account the link is for. */
export const maskEmail = (email: string) => {
  const [local = '', domain = ''] = email.split('@');
  return `${local.slice(0, 1)}***@${domain}`;
};

type Actor = { userId: string; actor: string; ip: string };

const invitationColumns = {
  id: projectInvitations.id,
  email: projectInvitations.email,
  role: projectInvitations.role,
  invitedBy: users.email,
  createdAt: projectInvitations.createdAt,
  expiresAt: projectInvitations.expiresAt,
};
const asInvitation = (r: {
  id: string;
  email: string;
  role: ProjectInvitation['role'];
  invitedBy: string;
  createdAt: Date;
  expiresAt: Date;
}): ProjectInvitation => ({
  ...r,
  createdAt: r.createdAt.toISOString(),
  expiresAt: r.expiresAt.toISOString(),
});

const pending = (now: Date) =>
  and(
    isNull(projectInvitations.acceptedAt),
    isNull(projectInvitations.revokedAt),
    gt(projectInvitations.expiresAt, now),
  );

export async function listInvitations(db: Database, projectId: string, now = new Date()) {
  const rows = await db
    .select(invitationColumns)
    .from(projectInvitations)
    .innerJoin(users, eq(users.id, projectInvitations.invitedBy))
    .where(and(eq(projectInvitations.projectId, projectId), pending(now)))
    .orderBy(asc(projectInvitations.createdAt));
  return rows.map(asInvitation);
}

async function sendInvitation(
  providers: Providers,
  input: { to: string; projectName: string; inviter: string; role: ProjectInvitation['role']; link: string },
) {
  try {
    await providers.email.send({
      to: input.to,
      subject: `邀请你加入项目「${input.projectName}」`,
      text: [
        `${input.inviter} 邀请你以「${ROLE_LABELS[input.role]}」身份加入项目「${input.projectName}」。`,
        `请在 ${INVITATION_TTL_DAYS} 天内打开以下链接接受邀请（链接仅可使用一次）：`,
        input.link,
        '如果你还没有账号，请先用本邮箱注册，再打开此链接。如非预期，请忽略本邮件。',
      ].join('\n'),
    });
  } catch (err) {
    throw new AppError(503, 'SERVICE_UNAVAILABLE', '邀请邮件发送失败，请稍后重试', { cause: err });
  }
}

/**
 * Invites by e-mail. An earlier pending invitation to the same address is revoked, so the newest
 * link is the only one that works. The mail goes out after the commit: a failure to send answers
 * 503 and the invitation stays listed, where 复制链接 gives a working link.
 */
export async function inviteMember(
  db: Database,
  providers: Providers,
  project: ProjectAccess,
  actor: Actor,
  input: InviteMemberRequest & { baseUrl: string },
  now = new Date(),
): Promise<InvitationLink> {
  requireManager(project, memberMessages.manage);
  const token = randomBytes(32).toString('base64url');
  const id = randomUUID();
  const expiresAt = new Date(now.getTime() + INVITATION_TTL_MS);
  await db.transaction(async (tx) => {
    const [existing] = await tx
      .select({ userId: memberships.userId })
      .from(memberships)
      .innerJoin(users, eq(users.id, memberships.userId))
      .where(and(eq(memberships.projectId, project.id), eq(users.email, input.email)))
      .limit(1);
    if (existing) throw badRequest(memberMessages.alreadyMember);
    await tx
      .update(projectInvitations)
      .set({ revokedAt: now })
      .where(
        and(
          eq(projectInvitations.projectId, project.id),
          eq(projectInvitations.email, input.email),
          pending(now),
        ),
      );
    await tx.insert(projectInvitations).values({
      id,
      projectId: project.id,
      email: input.email,
      role: input.role,
      tokenHash: hashToken(token),
      invitedBy: actor.userId,
      createdAt: now,
      expiresAt,
    });
    await recordAudit(tx, {
      ...actor,
      projectId: project.id,
      action: 'member.invited',
      targetType: 'invitation',
      targetId: id,
      summary: `${input.email}（${ROLE_LABELS[input.role]}）`,
      detail: { email: input.email, role: input.role },
    });
  });
  const link = invitationUrl(input.baseUrl, token);
  await sendInvitation(providers, {
    to: input.email,
    projectName: project.name,
    inviter: actor.actor,
    role: input.role,
    link,
  });
  return {
    id,
    email: input.email,
    role: input.role,
    invitedBy: actor.actor,
    createdAt: now.toISOString(),
    expiresAt: expiresAt.toISOString(),
    link,
  };
}

/**
 * 复制链接: the token is not stored, so a pending invitation gets a new one (and seven more
 * days); the link sent earlier stops working.
 */
export async function renewInvitationLink(
  db: Database,
  project: ProjectAccess,
  invitationId: string,
  baseUrl: string,
  now = new Date(),
): Promise<InvitationLink> {
  requireManager(project, memberMessages.manage);
  const token = randomBytes(32).toString('base64url');
  const [row] = await db
    .update(projectInvitations)
    .set({ tokenHash: hashToken(token), expiresAt: new Date(now.getTime() + INVITATION_TTL_MS) })
    .where(
      and(
        eq(projectInvitations.id, invitationId),
        eq(projectInvitations.projectId, project.id),
        pending(now),
      ),
    )
    .returning({ id: projectInvitations.id });
  if (!row) throw notFound(memberMessages.invitationMissing);
  const [renewed] = await db
    .select(invitationColumns)
    .from(projectInvitations)
    .innerJoin(users, eq(users.id, projectInvitations.invitedBy))
    .where(eq(projectInvitations.id, invitationId));
  return { ...asInvitation(renewed!), link: invitationUrl(baseUrl, token) };
}

export async function revokeInvitation(
  db: Database,
  project: ProjectAccess,
  actor: Actor,
  invitationId: string,
  now = new Date(),
) {
  requireManager(project, memberMessages.manage);
  await db.transaction(async (tx) => {
    const [row] = await tx
      .update(projectInvitations)
      .set({ revokedAt: now })
      .where(
        and(
          eq(projectInvitations.id, invitationId),
          eq(projectInvitations.projectId, project.id),
          pending(now),
        ),
      )
      .returning({ email: projectInvitations.email, role: projectInvitations.role });
    if (!row) throw notFound(memberMessages.invitationMissing);
    await recordAudit(tx, {
      ...actor,
      projectId: project.id,
      action: 'member.invitation_revoked',
      targetType: 'invitation',
      targetId: invitationId,
      summary: row.email,
      detail: { email: row.email, role: row.role },
    });
  });
}

async function findByToken(db: Database, token: string) {
  const [row] = await db
    .select({
      id: projectInvitations.id,
      projectId: projectInvitations.projectId,
      projectName: projects.name,
      email: projectInvitations.email,
      role: projectInvitations.role,
      invitedBy: users.displayName,
      expiresAt: projectInvitations.expiresAt,
      acceptedAt: projectInvitations.acceptedAt,
      revokedAt: projectInvitations.revokedAt,
    })
    .from(projectInvitations)
    .innerJoin(projects, eq(projects.id, projectInvitations.projectId))
    .innerJoin(users, eq(users.id, projectInvitations.invitedBy))
    .where(eq(projectInvitations.tokenHash, hashToken(token)))
    .limit(1);
  return row;
}

const statusOf = (row: { acceptedAt: Date | null; revokedAt: Date | null; expiresAt: Date }, now: Date) =>
  row.acceptedAt ? 'accepted' : row.revokedAt ? 'revoked' : row.expiresAt <= now ? 'expired' : 'pending';

/** For the /invite/<token> page, before login: the token itself is the credential to see it. */
export async function previewInvitation(
  db: Database,
  token: string,
  now = new Date(),
): Promise<InvitationPreview> {
  const row = await findByToken(db, token);
  if (!row) throw notFound(memberMessages.invalidLink);
  return {
    projectName: row.projectName,
    role: row.role,
    email: maskEmail(row.email),
    invitedBy: row.invitedBy,
    expiresAt: row.expiresAt.toISOString(),
    status: statusOf(row, now),
  };
}

/**
 * The link proves access to the mailbox; the account must carry the same address, so a
 * forwarded link cannot make someone else a member. Single use: the conditional update lets
 * exactly one of two simultaneous accepts through.
 */
export async function acceptInvitation(
  db: Database,
  user: { id: string; email: string },
  token: string,
  ip: string,
  now = new Date(),
): Promise<InvitationAccepted> {
  const row = await findByToken(db, token);
  if (!row) throw notFound(memberMessages.invalidLink);
  const status = statusOf(row, now);
  if (status !== 'pending') throw badRequest(memberMessages[status]);
  if (row.email !== user.email.toLowerCase())
    throw forbidden(`该邀请发给 ${maskEmail(row.email)}，请使用该邮箱的账号登录后接受`);
  await db.transaction(async (tx) => {
    const [used] = await tx
      .update(projectInvitations)
      .set({ acceptedAt: now })
      .where(and(eq(projectInvitations.id, row.id), pending(now)))
      .returning({ id: projectInvitations.id });
    if (!used) throw badRequest(memberMessages.accepted);
    const joined = await tx
      .insert(memberships)
      .values({ projectId: row.projectId, userId: user.id, role: row.role, createdAt: now })
      .onConflictDoNothing()
      .returning({ userId: memberships.userId });
    if (joined.length === 0) throw badRequest(memberMessages.alreadyJoined);
    await recordAudit(tx, {
      projectId: row.projectId,
      userId: user.id,
      actor: user.email,
      ip,
      action: 'member.joined',
      targetType: 'member',
      targetId: user.id,
      summary: `${user.email}（${ROLE_LABELS[row.role]}）`,
      detail: { role: row.role, invitationId: row.id },
    });
  });
  return { projectId: row.projectId, projectName: row.projectName, role: row.role };
}

/**
 * Locks the project's memberships for the rest of the transaction, so two owners demoting each
 * other at once cannot both pass the "another owner remains" check.
 */
async function lockMembers(tx: Database, projectId: string) {
  const rows = await tx
    .select({ userId: memberships.userId, role: memberships.role, email: users.email })
    .from(memberships)
    .innerJoin(users, eq(users.id, memberships.userId))
    .where(eq(memberships.projectId, projectId))
    .for('update', { of: memberships });
  return rows;
}

function assertMayTouch(
  project: ProjectAccess,
  members: { userId: string; role: ProjectRole }[],
  targetId: string,
  to: ProjectRole | null,
) {
  const target = members.find((m) => m.userId === targetId);
  if (!target) throw notFound(memberMessages.memberMissing);
  if (target.role === 'owner' && project.role !== 'owner') throw forbidden(memberMessages.adminVsOwner);
  if (to === 'owner' && project.role !== 'owner') throw forbidden(memberMessages.onlyOwnerPromotes);
  const owners = members.filter((m) => m.role === 'owner').length;
  if (target.role === 'owner' && to !== 'owner' && owners <= 1) throw badRequest(memberMessages.lastOwner);
  return target;
}

export async function changeMemberRole(
  db: Database,
  project: ProjectAccess,
  actor: Actor,
  targetId: string,
  role: ProjectRole,
) {
  requireManager(project, memberMessages.manage);
  await db.transaction(async (tx) => {
    const members = await lockMembers(tx, project.id);
    const target = assertMayTouch(project, members, targetId, role);
    if (target.role === role) return;
    await tx
      .update(memberships)
      .set({ role })
      .where(and(eq(memberships.projectId, project.id), eq(memberships.userId, targetId)));
    await recordAudit(tx, {
      ...actor,
      projectId: project.id,
      action: 'member.role_changed',
      targetType: 'member',
      targetId,
      summary: `${members.find((m) => m.userId === targetId)?.email ?? ''}：${ROLE_LABELS[target.role]} → ${ROLE_LABELS[role]}`,
      detail: { from: target.role, to: role },
    });
  });
}

/** Removal by a manager, or `self` leaving (any role may leave, except the last owner). */
export async function removeMember(
  db: Database,
  project: ProjectAccess,
  actor: Actor,
  targetId: string,
  self = false,
) {
  if (!self) requireManager(project, memberMessages.manage);
  await db.transaction(async (tx) => {
    const members = await lockMembers(tx, project.id);
    // Leaving is not managing: an admin or member may leave whatever the roles of others.
    const target = assertMayTouch(self ? { ...project, role: 'owner' } : project, members, targetId, null);
    await tx
      .delete(memberships)
      .where(and(eq(memberships.projectId, project.id), eq(memberships.userId, targetId)));
    const email = members.find((m) => m.userId === targetId)?.email ?? '';
    await recordAudit(tx, {
      ...actor,
      projectId: project.id,
      action: 'member.removed',
      targetType: 'member',
      targetId,
      summary: self ? `${email} 退出项目` : `${email}（${ROLE_LABELS[target.role]}）`,
      detail: { role: target.role, left: self },
    });
  });
}
