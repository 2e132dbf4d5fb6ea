import type { HitTestResult, KnowledgeDocumentStatus } from '@callpilot/contracts';
import dayjs from 'dayjs';

export const STATUS_TAG_COLORS: Record<KnowledgeDocumentStatus, string> = {
  queued: 'default',
  parsing: 'processing',
  ready: 'success',
  failed: 'error',
};

export const RETRIEVAL_MODE_LABELS: Record<HitTestResult['mode'], string> = {
  fulltext: '全文检索',
  hybrid: '混合检索',
};

export const formatTime = (iso: string) => dayjs(iso).format('YYYY-MM-DD HH:mm');

/** Scores are 0-1; two decimals match the assistant's score-threshold setting. */
export const formatScore = (score: number) => score.toFixed(2);
