export const CALL_TASK_LIST_PATH = '/call-task/list';
export const CALL_TASK_ADD_PATH = '/call-task/add';
export const CALL_TASK_CALLS_PATH = '/call-task/task-detail-list';

export const taskDetailPath = (id: string) => `/call-task/task-detail/${encodeURIComponent(id)}`;

/** The wizard on an existing task: settings prefilled, saving rewrites them; `step` opens a later step. */
export const taskEditPath = (id: string, step?: number) =>
  `${CALL_TASK_ADD_PATH}?id=${encodeURIComponent(id)}${step ? `&step=${step}` : ''}`;

export const taskCallsPath = (taskId: string) =>
  `${CALL_TASK_CALLS_PATH}?taskId=${encodeURIComponent(taskId)}`;

export const callTaskListBackPath = `${CALL_TASK_LIST_PATH}?back=1`;
