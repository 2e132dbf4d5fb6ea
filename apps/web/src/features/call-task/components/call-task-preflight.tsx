import type { TaskDetail } from '@callpilot/contracts';
import { Alert, Button, Descriptions } from 'antd';
import { useCallTaskPreflight } from '../api/get-call-task-preflight';
import { useRunCallTaskAction } from '../api/run-call-task-action';
import { formatDateTime, formatDuration } from '../utils/call-task-format';

type Props = {
  projectId: string;
  task: TaskDetail;
  /** After a start (or resume), or when the user keeps the task for later. */
  onDone: (task: TaskDetail) => void;
};

export function CallTaskPreflight({ projectId, task, onDone }: Props) {
  const preflight = useCallTaskPreflight(projectId, task.id);
  const run = useRunCallTaskAction(projectId);
  // A paused task picks up where it stopped; only a draft is started.
  const action = task.state === 'paused' ? 'resume' : 'start';
  const canStart = task.state === 'draft' || task.state === 'paused';
  const check = preflight.data;

  if (preflight.isPending) return <p className="text-sm text-gray-500">正在预检...</p>;
  if (!check) {
    return (
      <div className="flex items-center gap-3 text-sm text-gray-600">
        <span>预检失败</span>
        <Button size="small" onClick={() => preflight.refetch()}>
          重试
        </Button>
      </div>
    );
  }

  return (
    <div className="flex max-w-3xl flex-col gap-4">
      <Descriptions
        bordered
        size="small"
        column={{ xs: 1, md: 2 }}
        items={[
          { key: 'contacts', label: '联系人', children: `${check.contacts.toLocaleString('zh-CN')} 个` },
          {
            key: 'concurrency',
            label: '并发数',
            children:
              check.projectConcurrency !== null
                ? `${check.concurrency} 路（项目上限 ${check.projectConcurrency} 路）`
                : `${check.concurrency} 路`,
          },
          {
            key: 'maxCalls',
            label: '最多呼叫',
            children: `${check.maxCalls.toLocaleString('zh-CN')} 次（含重拨）`,
          },
          {
            key: 'expectedCalls',
            label: '预计呼叫',
            children: `${check.expectedCalls.toLocaleString('zh-CN')} 次`,
          },
          { key: 'expectedSeconds', label: '预计用时', children: formatDuration(check.expectedSeconds) },
          { key: 'finishAt', label: '预计完成', children: formatDateTime(check.expectedFinishAt) },
          { key: 'balance', label: '余额', children: check.balanceOk ? '充足' : '不足' },
        ]}
      />
      {check.notes && check.notes.length > 0 && (
        <Alert
          type="info"
          showIcon
          title="提示"
          description={
            <ul className="list-disc pl-4">
              {check.notes.map((note) => (
                <li key={note}>{note}</li>
              ))}
            </ul>
          }
        />
      )}
      {check.problems.length > 0 ? (
        <Alert
          type="error"
          showIcon
          title="暂不能启动"
          description={
            <ul className="list-disc pl-4">
              {check.problems.map((problem) => (
                <li key={problem}>{problem}</li>
              ))}
            </ul>
          }
        />
      ) : (
        <Alert type="success" showIcon title="预检通过，可以启动" />
      )}
      <div className="flex gap-2">
        {canStart && (
          <Button
            type="primary"
            loading={run.isPending}
            disabled={check.problems.length > 0}
            onClick={() => run.mutate({ taskId: task.id, action }, { onSuccess: onDone })}
          >
            {action === 'resume' ? '继续任务' : '立即启动'}
          </Button>
        )}
        <Button disabled={run.isPending} onClick={() => onDone(task)}>
          {task.state === 'draft' ? '保存为草稿' : '完成'}
        </Button>
        <Button type="link" onClick={() => void preflight.refetch()} disabled={preflight.isFetching}>
          重新预检
        </Button>
      </div>
    </div>
  );
}
