import type { ProjectRole } from '@callpilot/contracts';

/** Without balance control everything is open; with it, a zero limit means the feature is off. */
export function describeLimit(value: number, hasBalance: boolean, unit: string): string {
  if (!hasBalance) return '不限';
  if (value === 0) return '未开通';
  return `${value.toLocaleString('zh-CN')} ${unit}`;
}

export const ROLE_LABELS: Record<ProjectRole, string> = { owner: '所有者', admin: '管理员', member: '成员' };
