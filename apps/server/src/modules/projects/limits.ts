import type { Database } from '../../db/client';
import { AppError } from '../../lib/errors';
import { getLimits } from './projects.service';

export type LimitedFeature = 'assistant' | 'knowledge' | 'ttsClone';

const FEATURES: Record<
  LimitedFeature,
  { label: string; unit: string; column: 'assistantLimit' | 'knowledgeLimit' | 'ttsCloneLimit' }
> = {
  assistant: { label: '智能小助手', unit: '个', column: 'assistantLimit' },
  knowledge: { label: '知识库', unit: '个', column: 'knowledgeLimit' },
  ttsClone: { label: '声音克隆', unit: '个', column: 'ttsCloneLimit' },
};

/**
 * Called by a feature before it creates one more of something. With hasBalance false the
 * project is unmetered (spec section 4); otherwise the limit caps the count and 0 means the
 * feature is not open at all.
 */
export async function assertWithinLimit(
  db: Database,
  projectId: string,
  feature: LimitedFeature,
  currentCount: number,
): Promise<void> {
  const limits = await getLimits(db, projectId);
  if (!limits.hasBalance) return;
  const { label, unit, column } = FEATURES[feature];
  const limit = limits[column];
  if (limit <= 0) throw new AppError(403, 'LIMIT_REACHED', `${label}功能未开通，请联系销售开通`);
  if (currentCount >= limit) {
    throw new AppError(403, 'LIMIT_REACHED', `${label}数量已达上限（${limit} ${unit}），请联系销售提升额度`);
  }
}
