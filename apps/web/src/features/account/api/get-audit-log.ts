import type { AuditLogList, AuditLogQuery } from '@callpilot/contracts';
import { keepPreviousData, queryOptions, useQuery } from '@tanstack/react-query';
import { get } from '@/lib/request';

/** The filters as the console holds them: empty values are left out of the query. */
export type AuditLogFilterValues = Partial<Pick<AuditLogQuery, 'action' | 'actor' | 'from' | 'to'>>;

export const toAuditLogParams = (filters: AuditLogFilterValues) =>
  Object.fromEntries(Object.entries(filters).filter(([, value]) => value !== undefined && value !== ''));

/** One project's log (owners and admins), or with no project the user's own account events. */
export function getAuditLog(
  projectId: string | null,
  query: AuditLogFilterValues & { page: number; pageSize: number },
): Promise<AuditLogList> {
  const url = projectId ? `/api/project/${encodeURIComponent(projectId)}/audit-log` : '/api/user/audit-log';
  return get<AuditLogList>(url, { params: toAuditLogParams(query) });
}

export const auditLogQueryOptions = (
  projectId: string | null,
  query: AuditLogFilterValues & { page: number; pageSize: number },
) =>
  queryOptions({
    queryKey: projectId ? ['projects', projectId, 'audit-log', query] : ['user', 'audit-log', query],
    queryFn: () => getAuditLog(projectId, query),
  });

export function useAuditLog(
  projectId: string | null,
  query: AuditLogFilterValues & { page: number; pageSize: number },
) {
  // Paging keeps the last page on screen until the next arrives, instead of flashing empty.
  return useQuery({ ...auditLogQueryOptions(projectId, query), placeholderData: keepPreviousData });
}
