import { SMS_SOURCE_LABELS, type SmsMessage } from '@callpilot/contracts';
import { Link } from 'react-router';
import { paths } from '@/config/paths';
import { callDetailPath } from '@/entities/call/utils/call-paths';

/** The call task's page (owned by the call-task feature; a feature never imports another). */
export const taskDetailHref = (taskId: string) => `/call-task/task-detail/${encodeURIComponent(taskId)}`;
/** A batch has no page of its own: its messages are this list, filtered. */
export const batchRecordsHref = (batchId: string) =>
  `${paths.smsRecord}?batchId=${encodeURIComponent(batchId)}`;

/** Where a message came from, with a link to what sent it. */
export function SmsMessageOrigin({
  message,
}: {
  message: Pick<SmsMessage, 'source' | 'callId' | 'taskId' | 'batchId'>;
}) {
  return (
    <span className="flex flex-wrap items-center gap-x-2">
      <span>{SMS_SOURCE_LABELS[message.source]}</span>
      {message.callId && <Link to={callDetailPath(message.callId)}>通话</Link>}
      {message.taskId && <Link to={taskDetailHref(message.taskId)}>任务</Link>}
      {message.batchId && <Link to={batchRecordsHref(message.batchId)}>批次</Link>}
    </span>
  );
}
