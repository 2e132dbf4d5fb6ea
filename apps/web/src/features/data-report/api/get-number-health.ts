import type { NumberHealthRow } from '@callpilot/contracts';
import type { ReportQuery } from '../utils/report-range';
import { useReport } from './use-report';

/** 外显号码健康度 */
export const useNumberHealth = (projectId: string, query: ReportQuery | null) =>
  useReport<{ rows: NumberHealthRow[] }>(projectId, 'numbers', query);
