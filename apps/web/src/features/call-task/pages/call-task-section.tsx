import { Navigate, useLocation } from 'react-router';
import { CALL_TASK_ADD_PATH, CALL_TASK_CALLS_PATH, CALL_TASK_LIST_PATH } from '../utils/call-task-paths';
import { CallTaskAddPage } from './call-task-add-page';
import { CallTaskCallsPage } from './call-task-calls-page';
import { CallTaskDetailPage } from './call-task-detail-page';
import { CallTaskListPage } from './call-task-list-page';

/** The section's one lazy chunk: list, add, task-detail/:id and task-detail-list. */
export function CallTaskSection() {
  const { pathname } = useLocation();
  if (pathname === CALL_TASK_LIST_PATH) return <CallTaskListPage />;
  if (pathname === CALL_TASK_ADD_PATH) return <CallTaskAddPage />;
  if (pathname === CALL_TASK_CALLS_PATH) return <CallTaskCallsPage />;
  if (pathname.startsWith('/call-task/task-detail/')) return <CallTaskDetailPage key={pathname} />;
  return <Navigate to={CALL_TASK_LIST_PATH} replace />;
}
