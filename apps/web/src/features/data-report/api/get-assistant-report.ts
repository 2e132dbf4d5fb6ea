import type { AssistantReport } from '@callpilot/contracts';
import type { ReportQuery } from '../utils/report-range';
import { useReport } from './use-report';

export const useAssistantReport = (projectId: string, query: ReportQuery | null) =>
  useReport<AssistantReport>(projectId, 'assistant', query);
