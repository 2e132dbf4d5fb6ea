import { type SmsReviewStatus, smsReviewStatus } from '@callpilot/contracts';
import { useSearchParams } from 'react-router';
import type { SmsReviewListParams } from '../api/sms-query-keys';

const DEFAULT_PAGE_SIZE = 20;

const positiveInt = (value: string | null, fallback: number) => {
  const number = Number(value);
  return Number.isInteger(number) && number > 0 ? number : fallback;
};

/** Page and status filter live in the URL, so a reload or a shared link shows the same view. */
export function useSmsListQuery() {
  const [searchParams, setSearchParams] = useSearchParams();
  const parsedStatus = smsReviewStatus.safeParse(searchParams.get('status'));
  const params: SmsReviewListParams = {
    page: positiveInt(searchParams.get('page'), 1),
    pageSize: Math.min(100, positiveInt(searchParams.get('pageSize'), DEFAULT_PAGE_SIZE)),
    ...(parsedStatus.success ? { status: parsedStatus.data } : {}),
  };

  const setQuery = (
    next: Partial<{ page: number; pageSize: number; status: SmsReviewStatus | undefined }>,
  ) => {
    const merged = { ...params, ...next };
    const search = new URLSearchParams();
    if (merged.page > 1) search.set('page', String(merged.page));
    if (merged.pageSize !== DEFAULT_PAGE_SIZE) search.set('pageSize', String(merged.pageSize));
    if (merged.status) search.set('status', merged.status);
    setSearchParams(search, { replace: true });
  };

  return { params, setQuery };
}
