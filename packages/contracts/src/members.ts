import { z } from 'zod';
import { email, projectRole } from './auth';

/** Roles an invitation may carry: a project gets a new owner only by an owner promoting a member. */
export const invitableRole = z.enum(['admin', 'member', 'readonly'], {
  error: '角色只能是管理员、成员或只读',
});
export type InvitableRole = z.infer<typeof invitableRole>;

export const INVITATION_TTL_DAYS = 7;

export const inviteMemberRequest = z
  .object({
    email: z
      .string({ error: '请输入邮箱' })
      .trim()
      .min(1, { error: '请输入邮箱' })
      .pipe(email)
      .transform((v) => v.toLowerCase()),
    role: invitableRole,
  })
  .meta({ id: 'InviteMemberRequest' });
export type InviteMemberRequest = z.infer<typeof inviteMemberRequest>;

export const projectInvitation = z
  .object({
    id: z.string(),
    email: z.string(),
    role: invitableRole,
    invitedBy: z.string(),
    createdAt: z.iso.datetime(),
    expiresAt: z.iso.datetime(),
  })
  .meta({ id: 'ProjectInvitation' });
export type ProjectInvitation = z.infer<typeof projectInvitation>;

/** Answered once, when the token exists in clear: only its hash is stored afterwards. */
export const invitationLink = projectInvitation.extend({ link: z.string() }).meta({ id: 'InvitationLink' });
export type InvitationLink = z.infer<typeof invitationLink>;

export const invitationStatus = z.enum(['pending', 'expired', 'accepted', 'revoked']);
export type InvitationStatus = z.infer<typeof invitationStatus>;

/** What the /invite/<token> page shows before the visitor accepts. */
export const invitationPreview = z
  .object({
    projectName: z.string(),
    role: invitableRole,
    /** Masked (a***@example.com): the page tells which account to use without publishing the address. */
    email: z.string(),
    invitedBy: z.string(),
    expiresAt: z.iso.datetime(),
    status: invitationStatus,
  })
  .meta({ id: 'InvitationPreview' });
export type InvitationPreview = z.infer<typeof invitationPreview>;

export const invitationAccepted = z
  .object({ projectId: z.string(), projectName: z.string(), role: projectRole })
  .meta({ id: 'InvitationAccepted' });
export type InvitationAccepted = z.infer<typeof invitationAccepted>;

export const updateMemberRoleRequest = z
  .object({
    role: z.enum(['owner', 'admin', 'member', 'readonly'], { error: '角色只能是所有者、管理员、成员或只读' }),
  })
  .meta({ id: 'UpdateMemberRoleRequest' });
export type UpdateMemberRoleRequest = z.infer<typeof updateMemberRoleRequest>;

const id = (label: string) =>
  z
    .string({ error: `缺少${label}` })
    .min(1, { error: `缺少${label}` })
    .max(64, { error: `${label}不正确` });

export const memberParams = z.object({ projectId: id('项目 ID'), userId: id('成员 ID') });
export const invitationParams = z.object({ projectId: id('项目 ID'), invitationId: id('邀请 ID') });
export const invitationTokenParams = z.object({
  token: z.string({ error: '缺少邀请链接' }).regex(/^[A-Za-z0-9_-]{20,100}$/, { error: '邀请链接不正确' }),
});
