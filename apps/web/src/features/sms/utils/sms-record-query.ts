import { type SmsMessageStatus, type SmsSource, smsMessageStatus, smsSource } from '@callpilot/contracts';
import { useSearchParams } from 'react-router';

export const SMS_RECORD_PAGE_SIZE = 20;

/** What the 发送记录 list is narrowed by; every key is also its name in the URL and in the API. */
export type SmsRecordFilters = {
  /** ISO instants, inclusive. */
  from?: string;
  to?: string;
  phone?: string;
  templateId?: string;
  status?: SmsMessageStatus;
  source?: SmsSource;
  /** Set by links from other pages (a call, a task, a batch); shown as removable chips. */
  taskId?: string;
  callId?: string;
  batchId?: string;
};

export const SMS_LINK_FILTERS = ['callId', 'taskId', 'batchId'] as const;
const TEXT_KEYS = ['from', 'to', 'phone', 'templateId', ...SMS_LINK_FILTERS] as const;

const positiveInt = (value: string | null, fallback: number) => {
  const number = Number(value);
  return Number.isInteger(number) && number > 0 ? number : fallback;
};

export function smsRecordFiltersFrom(search: URLSearchParams): SmsRecordFilters {
  const filters: SmsRecordFilters = {};
  for (const key of TEXT_KEYS) {
    const value = search.get(key)?.trim();
    if (value) filters[key] = value;
  }
  const status = smsMessageStatus.safeParse(search.get('status'));
  if (status.success) filters.status = status.data;
  const source = smsSource.safeParse(search.get('source'));
  if (source.success) filters.source = source.data;
  return filters;
}

/** The filters as the API's query string (no empty values). */
export const toSmsRecordQuery = (filters: SmsRecordFilters): Record<string, string> =>
  Object.fromEntries(Object.entries(filters).filter(([, value]) => Boolean(value))) as Record<string, string>;

/**
 * Filters and page live in the URL: a reload or a shared link shows the same list, and other pages
 * link here already filtered (/sms/record?callId=…).
 */
export function useSmsRecordQuery() {
  const [search, setSearch] = useSearchParams();
  const filters = smsRecordFiltersFrom(search);
  const page = positiveInt(search.get('page'), 1);

  const write = (next: SmsRecordFilters, nextPage: number) => {
    const params = new URLSearchParams(toSmsRecordQuery(next));
    if (nextPage > 1) params.set('page', String(nextPage));
    setSearch(params, { replace: true });
  };

  return {
    filters,
    page,
    /** A new search starts again at page 1. */
    setFilters: (next: SmsRecordFilters) => write(next, 1),
    setPage: (next: number) => write(filters, next),
  };
}
