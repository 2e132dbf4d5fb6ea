export { ROLE_LABELS } from '@callpilot/contracts';

/** Without balance control everything is open; with it, a zero limit means the feature is off. */
export function describeLimit(value: number, hasBalance: boolean, unit: string): string {
  if (!hasBalance) return '不限';
  if (value === 0) return '未开通';
  return `${value.toLocaleString('zh-CN')} ${unit}`;
}
