import type { KnowledgeReport } from '@callpilot/contracts';
import type { ReportQuery } from '../utils/report-range';
import { useReport } from './use-report';

export const useKnowledgeReport = (projectId: string, query: ReportQuery | null) =>
  useReport<KnowledgeReport>(projectId, 'knowledge', query);
