export const CALL_RECORD_LIST_PATH = '/call-record/list';

export const callDetailPath = (id: string) => `/call-record/detail/${encodeURIComponent(id)}`;

/** The list URL to return to, marked `back=1` so the list restores its cached filters and page. */
export function withBackFlag(url: string | null | undefined): string {
  const target = url?.startsWith(CALL_RECORD_LIST_PATH) ? url : CALL_RECORD_LIST_PATH;
  const [path, query = ''] = target.split('?');
  const params = new URLSearchParams(query);
  params.set('back', '1');
  return `${path}?${params.toString()}`;
}
