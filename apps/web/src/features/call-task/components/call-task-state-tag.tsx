import { TASK_STATE_LABELS, type TaskState } from '@callpilot/contracts';
import { Tag } from 'antd';
import { TASK_STATE_COLORS } from '../utils/call-task-format';

export function CallTaskStateTag({ state }: { state: TaskState }) {
  return (
    <Tag color={TASK_STATE_COLORS[state]} className="!m-0">
      {TASK_STATE_LABELS[state]}
    </Tag>
  );
}
