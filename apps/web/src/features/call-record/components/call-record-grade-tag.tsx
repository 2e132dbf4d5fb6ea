import type { IntentGrade } from '@callpilot/contracts';
import { Tag, Tooltip } from 'antd';
import { GRADE_COLORS, gradeLabel } from '../utils/call-record-format';

/** The effective grade; a human one is marked, since it overrides the machine's. */
export function CallRecordGradeTag({ grade, human }: { grade: IntentGrade | null; human: boolean }) {
  if (!grade) return <span className="text-gray-400">-</span>;
  return (
    <span className="inline-flex items-center gap-1">
      <Tag color={GRADE_COLORS[grade]} className="!m-0">
        {gradeLabel(grade)}
      </Tag>
      {human && (
        <Tooltip title="人工复核的等级">
          <span className="text-xs text-orange-500">人工</span>
        </Tooltip>
      )}
    </span>
  );
}
