export const CALL_RECORD_LIST_PATH = '/call-record/list';
export const CALL_DETAIL_PATH_PREFIX = '/call-record/detail/';

/** The call records section's detail page: every page that shows a call links here. */
export const callDetailPath = (id: string) => `${CALL_DETAIL_PATH_PREFIX}${encodeURIComponent(id)}`;

/** Pages a call detail may be opened from, and so return to: the records list, a task's calls, home. */
const RETURN_PATHS = [CALL_RECORD_LIST_PATH, '/call-task/', '/dashboard'];

/** The list URL to return to, marked `back=1` so the list restores its cached filters and page. */
export function withBackFlag(url: string | null | undefined): string {
  const target = url && RETURN_PATHS.some((prefix) => url.startsWith(prefix)) ? url : CALL_RECORD_LIST_PATH;
  const [path, query = ''] = target.split('?');
  const params = new URLSearchParams(query);
  params.set('back', '1');
  return `${path}?${params.toString()}`;
}

/** Every figure that counts calls links to the list filtered as its `drill` says. */
export { callListHref } from '@/config/paths';
