import type { SmsReviewStatus, SmsStatisticsQuery } from '@callpilot/contracts';
import { projectUrl } from '@/lib/api/project-url';

// One place for the section's URLs and query keys, so a write invalidates exactly what it changed.

/** Signatures and templates go through the same review, so their routes and actions match. */
export type SmsReviewKind = 'signatures' | 'templates';

export const smsReviewUrl = (projectId: string, kind: SmsReviewKind, id?: string, action = '') =>
  projectUrl(projectId, `/sms/${kind}${id ? `/${encodeURIComponent(id)}` : ''}${action}`);

export type SmsReviewListParams = {
  page: number;
  pageSize: number;
  /** Absent: every state. */
  status?: SmsReviewStatus;
};

/** The 发送记录 list's query as the server takes it (from/to ISO, the rest as typed). */
export type SmsMessageListParams = Record<string, string | number>;

export const smsMessagesUrl = (projectId: string, suffix = '') =>
  projectUrl(projectId, `/sms/messages${suffix}`);

export const smsKeys = {
  all: (projectId: string) => ['projects', projectId, 'sms'] as const,
  messages: (projectId: string) => [...smsKeys.all(projectId), 'messages'] as const,
  messageList: (projectId: string, params: SmsMessageListParams) =>
    [...smsKeys.messages(projectId), 'list', params] as const,
  message: (projectId: string, id: string) => [...smsKeys.messages(projectId), 'one', id] as const,
  statistics: (projectId: string, query: SmsStatisticsQuery) =>
    [...smsKeys.all(projectId), 'statistics', query] as const,
  lists: (projectId: string, kind: SmsReviewKind) => [...smsKeys.all(projectId), kind, 'list'] as const,
  list: (projectId: string, kind: SmsReviewKind, params: SmsReviewListParams) =>
    [...smsKeys.lists(projectId, kind), params] as const,
  batches: (projectId: string) => [...smsKeys.all(projectId), 'batches'] as const,
  batchList: (projectId: string, params: SmsPageParams) => [...smsKeys.batches(projectId), params] as const,
  optOuts: (projectId: string) => [...smsKeys.all(projectId), 'opt-outs'] as const,
  optOutList: (projectId: string, params: SmsOptOutListParams) =>
    [...smsKeys.optOuts(projectId), params] as const,
  settings: (projectId: string) => [...smsKeys.all(projectId), 'settings'] as const,
};

export type SmsPageParams = { page: number; pageSize: number };
export type SmsOptOutListParams = SmsPageParams & { phone?: string };

/** Any other URL of the section (send, batches, opt-outs, settings). */
export const smsUrl = (projectId: string, path: string) => projectUrl(projectId, `/sms${path}`);
