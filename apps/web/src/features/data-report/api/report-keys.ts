import type { ReportQuery } from '../utils/report-range';

export type ReportName = 'callin' | 'assistant' | 'numbers' | 'knowledge' | 'knowledge/gaps';

export const reportUrl = (projectId: string, report: ReportName, suffix = '') =>
  `/api/project/${encodeURIComponent(projectId)}/reports/${report}${suffix}`;

export const reportKeys = {
  all: (projectId: string) => ['reports', projectId] as const,
  report: (projectId: string, report: ReportName, query: ReportQuery) =>
    [...reportKeys.all(projectId), report, query] as const,
  gaps: (projectId: string) => [...reportKeys.all(projectId), 'knowledge/gaps'] as const,
};
