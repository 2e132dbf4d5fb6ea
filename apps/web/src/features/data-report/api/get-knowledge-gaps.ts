import type { KnowledgeGapTopic } from '@callpilot/contracts';
import type { ReportQuery } from '../utils/report-range';
import { useReport } from './use-report';

/** 知识缺口: questions the knowledge bases could not answer, grouped by topic. */
export const useKnowledgeGaps = (projectId: string, query: ReportQuery | null) =>
  useReport<{ topics: KnowledgeGapTopic[]; total: number }>(projectId, 'knowledge/gaps', query);
