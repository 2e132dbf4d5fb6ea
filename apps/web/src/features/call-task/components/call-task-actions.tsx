import type { TaskAction, TaskDetail, TaskState, TaskSummary } from '@callpilot/contracts';
import { Button, Popconfirm } from 'antd';
import type { ReactNode } from 'react';
import { toast } from 'sonner';
import { useCanWrite } from '@/hooks/use-project-role';
import { useCopyCallTask } from '../api/copy-call-task';
import { useDeleteCallTask } from '../api/delete-call-task';
import { useRunCallTaskAction } from '../api/run-call-task-action';

/** What each state allows; the server enforces the same machine and says why when it refuses. */
const ACTIONS_BY_STATE: Record<TaskState, TaskAction[]> = {
  draft: ['start'],
  pending: ['pause', 'stop'],
  running: ['pause', 'stop'],
  paused: ['resume', 'stop'],
  completed: [],
  stopped: [],
};

const ACTION_LABELS: Record<TaskAction, string> = {
  start: '开始',
  pause: '暂停',
  resume: '继续',
  stop: '停止',
};
const ACTION_DONE: Record<TaskAction, string> = {
  start: '任务已开始',
  pause: '任务已暂停',
  resume: '任务已继续',
  stop: '任务已停止',
};

export const canEditTask = (state: TaskState) =>
  state === 'draft' || state === 'pending' || state === 'paused';
export const canImportContacts = canEditTask;

type Props = {
  projectId: string;
  task: TaskSummary;
  /** Links in a table row, buttons in a page header. */
  variant: 'link' | 'button';
  onCopied?: (copy: TaskDetail) => void;
  onDeleted?: () => void;
  onEdit?: () => void;
  /** Rendered first (the row's 详情 and 通话记录). */
  leading?: ReactNode;
};

export function CallTaskActions({ projectId, task, variant, onCopied, onDeleted, onEdit, leading }: Props) {
  const run = useRunCallTaskAction(projectId);
  const copy = useCopyCallTask(projectId);
  const remove = useDeleteCallTask(projectId);
  const busy = run.isPending || copy.isPending || remove.isPending;
  const buttonProps =
    variant === 'link' ? ({ type: 'link', size: 'small', className: '!px-0' } as const) : ({} as const);

  const act = (action: TaskAction) =>
    run.mutate({ taskId: task.id, action }, { onSuccess: () => toast.success(ACTION_DONE[action]) });
  const canWrite = useCanWrite();
  if (!canWrite) return <span className="flex flex-wrap gap-x-3">{leading}</span>;

  return (
    <span className={variant === 'link' ? 'flex flex-wrap gap-x-3' : 'flex flex-wrap gap-2'}>
      {leading}
      {ACTIONS_BY_STATE[task.state].map((action) =>
        action === 'stop' ? (
          // Stopping is final: the contacts not yet called are never called by this task.
          <Popconfirm
            key={action}
            title="确定停止该任务？"
            description="停止后无法继续，未呼叫的联系人将不再呼叫。"
            okText="停止"
            okButtonProps={{ danger: true }}
            cancelText="取消"
            onConfirm={() => act('stop')}
          >
            <Button {...buttonProps} danger disabled={busy}>
              {ACTION_LABELS.stop}
            </Button>
          </Popconfirm>
        ) : (
          <Button
            key={action}
            {...buttonProps}
            {...(variant === 'button' && (action === 'start' || action === 'resume')
              ? { type: 'primary' }
              : {})}
            disabled={busy}
            onClick={() => act(action)}
          >
            {ACTION_LABELS[action]}
          </Button>
        ),
      )}
      {onEdit && canEditTask(task.state) && (
        <Button {...buttonProps} disabled={busy} onClick={onEdit}>
          编辑
        </Button>
      )}
      <Button
        {...buttonProps}
        disabled={busy}
        onClick={() =>
          copy.mutate(task.id, {
            onSuccess: (created) => {
              toast.success(`已复制为「${created.name}」`);
              onCopied?.(created);
            },
          })
        }
      >
        复制
      </Button>
      {task.state === 'draft' && (
        <Popconfirm
          title="确定删除该草稿？"
          description="删除后联系人一并删除，且无法恢复。"
          okText="删除"
          okButtonProps={{ danger: true }}
          cancelText="取消"
          onConfirm={() =>
            remove.mutate(task.id, {
              onSuccess: () => {
                toast.success('已删除');
                onDeleted?.();
              },
            })
          }
        >
          <Button {...buttonProps} danger disabled={busy}>
            删除
          </Button>
        </Popconfirm>
      )}
    </span>
  );
}
