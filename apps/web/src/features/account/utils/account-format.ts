import type { ProjectRole } from '@callpilot/contracts';

/** Fen are integers; formatting them with integer arithmetic avoids 0.1 + 0.2 style drift. */
export function formatFen(fen: number): string {
  const sign = fen < 0 ? '-' : '';
  const abs = Math.abs(Math.trunc(fen));
  const yuan = Math.floor(abs / 100).toLocaleString('zh-CN');
  const cents = String(abs % 100).padStart(2, '0');
  return `${sign}¥${yuan}.${cents}`;
}

/** Without balance control everything is open; with it, a zero limit means the feature is off. */
export function describeLimit(value: number, hasBalance: boolean, unit: string): string {
  if (!hasBalance) return '不限';
  if (value === 0) return '未开通';
  return `${value.toLocaleString('zh-CN')} ${unit}`;
}

export const ROLE_LABELS: Record<ProjectRole, string> = { owner: '所有者', admin: '管理员', member: '成员' };
