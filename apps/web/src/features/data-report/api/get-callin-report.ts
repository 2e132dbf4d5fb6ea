import type { CallinReport } from '@callpilot/contracts';
import type { ReportQuery } from '../utils/report-range';
import { useReport } from './use-report';

export const useCallinReport = (projectId: string, query: ReportQuery | null) =>
  useReport<CallinReport>(projectId, 'callin', query);
