import type { RollupTx } from './rollup';

/**
 * Rebuilds knowledge_stats_hourly and knowledge_gaps for one project-hour. The caller has deleted
 * the hour's rows in the same transaction. Filled by the knowledge report's part.
 */
export async function recomputeKnowledgeHour(_tx: RollupTx, _projectId: string, _hour: Date): Promise<void> {}
