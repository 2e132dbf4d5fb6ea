import type { RollupTx } from './rollup';

/**
 * Rebuilds call_stats_histogram for one project-hour (hang-up turn, latency buckets). The caller
 * has deleted the hour's rows in the same transaction. Filled by the assistant report's part.
 */
export async function recomputeHistograms(_tx: RollupTx, _projectId: string, _hour: Date): Promise<void> {}
