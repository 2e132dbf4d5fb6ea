import {
  API_KEY_RESOURCE_LABELS,
  type ApiKey,
  type ApiKeyAccess,
  type ApiKeyResource,
  type ApiKeyScopes,
  apiKeyResource,
} from '@callpilot/contracts';
import dayjs from 'dayjs';

export const ACCESS_LABELS: Record<ApiKeyAccess, string> = { none: '无', read: '只读', write: '读写' };

/** The resource's name without its parenthesised note: 通话（发起单通外呼） → 通话. */
export const shortResourceLabel = (resource: ApiKeyResource) =>
  API_KEY_RESOURCE_LABELS[resource].replace(/（.*）$/, '');

/** The resources a key may reach, in the contracts' order, with what it may do there. */
export function grantedScopes(
  scopes: ApiKeyScopes,
): { resource: ApiKeyResource; access: 'read' | 'write' }[] {
  return apiKeyResource.options.flatMap((resource) => {
    const access = scopes[resource];
    return access === 'read' || access === 'write' ? [{ resource, access }] : [];
  });
}

// Enough to recognise a key at a glance; the popover shows the whole matrix.
const SUMMARY_ITEMS = 3;

/** 通话 读写 · 通话记录与录音 只读 · … 等 5 项 */
export function scopeSummary(scopes: ApiKeyScopes): string {
  const granted = grantedScopes(scopes);
  if (granted.length === 0) return '无权限';
  const shown = granted
    .slice(0, SUMMARY_ITEMS)
    .map(({ resource, access }) => `${shortResourceLabel(resource)} ${ACCESS_LABELS[access]}`)
    .join(' · ');
  return granted.length > SUMMARY_ITEMS ? `${shown} · 等 ${granted.length} 项` : shown;
}

/** Times as the rest of the console shows them (the browser's zone, which is China time here). */
export function formatTime(iso: string | null | undefined): string {
  return iso ? dayjs(iso).format('YYYY-MM-DD HH:mm:ss') : '-';
}

export function formatShortTime(iso: string | null | undefined): string {
  return iso ? dayjs(iso).format('YYYY-MM-DD HH:mm') : '-';
}

/** Keys that can still be used, and so edited, rolled or revoked. */
export const isUsable = (key: Pick<ApiKey, 'status'>) => key.status === 'active' || key.status === 'rolling';

export const STATUS_COLORS: Record<ApiKey['status'], string> = {
  active: 'success',
  rolling: 'gold',
  expired: 'default',
  revoked: 'red',
};

/** 宽限期 choices of a roll, with what each means for the old key. */
export const GRACE_OPTIONS: { hours: number; label: string }[] = [
  { hours: 0, label: '立即失效' },
  { hours: 1, label: '1 小时' },
  { hours: 24, label: '24 小时' },
  { hours: 72, label: '3 天' },
  { hours: 168, label: '7 天' },
];

/** HTTP status colours of the request and delivery logs. */
export function httpStatusColor(status: number | null): string {
  if (status === null) return 'red';
  if (status >= 200 && status < 300) return 'success';
  if (status >= 300 && status < 500) return 'orange';
  return 'red';
}
