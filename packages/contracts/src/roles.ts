import type { ProjectRole } from './auth';

/**
 * What each project role may do. The server enforces it (project-access plugin and the
 * handlers of settings routes); the console only hides what a role cannot do.
 *
 * - owner: everything, and is the one role a project cannot be left without.
 * - admin: everything an owner does except removing or demoting an owner.
 * - member: assistants, knowledge, tasks, flows, calls, SMS sending; not members, trunks,
 *   numbers, API keys, webhooks, provider settings or balance.
 * - readonly (只读): sees everything, changes nothing.
 */
export const ROLE_LABELS: Record<ProjectRole, string> = {
  owner: '所有者',
  admin: '管理员',
  member: '成员',
  readonly: '只读',
};

/** Members, trunks, numbers, API keys, webhooks, providers, balance. */
export const canManageProject = (role: ProjectRole) => role === 'owner' || role === 'admin';

/** Any change at all. */
export const canWrite = (role: ProjectRole) => role !== 'readonly';

/** Audit actions and how the console names them. */
export const AUDIT_ACTION_LABELS = {
  'auth.login': '登录',
  'auth.login_failed': '登录失败',
  'auth.logout': '退出登录',
  'auth.session_ended': '结束会话',
  'auth.password_changed': '修改密码',
  'auth.password_reset': '重置密码',
  'member.invited': '邀请成员',
  'member.invitation_revoked': '撤销邀请',
  'member.joined': '成员加入',
  'member.role_changed': '修改角色',
  'member.removed': '移除成员',
  'assistant.published': '发布助手',
  'assistant.rolled_back': '回滚助手',
  'flow.published': '发布流程',
  'flow.rolled_back': '回滚流程',
  'review.submitted': '提交审核',
  'review.approved': '审核通过',
  'review.rejected': '审核驳回',
  'task.started': '启动任务',
  'task.paused': '暂停任务',
  'task.stopped': '停止任务',
  'trunk.changed': '线路变更',
  'number.changed': '号码变更',
  'api_key.created': '创建 API 密钥',
  'api_key.revoked': '删除 API 密钥',
  'webhook.changed': 'Webhook 变更',
  'provider.changed': '服务商配置变更',
  'calls.exported': '导出通话记录',
  'project.settings_changed': '项目设置变更',
  'audit.exported': '导出操作日志',
} as const;
export type AuditAction = keyof typeof AUDIT_ACTION_LABELS;
