import { Navigate, useLocation } from 'react-router';
import { CALL_DETAIL_PATH_PREFIX, CALL_RECORD_LIST_PATH } from '@/entities/call/utils/call-paths';
import { CallRecordDetailPage } from './call-record-detail-page';
import { CallRecordListPage } from './call-record-list-page';

/** The section's one lazy chunk: /call-record/list and /call-record/detail/:id. */
export function CallRecordSection() {
  const { pathname } = useLocation();
  if (pathname === CALL_RECORD_LIST_PATH) return <CallRecordListPage />;
  if (pathname.startsWith(CALL_DETAIL_PATH_PREFIX)) return <CallRecordDetailPage />;
  return <Navigate to={CALL_RECORD_LIST_PATH} replace />;
}
