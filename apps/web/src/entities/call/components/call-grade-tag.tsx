import type { IntentGrade } from '@callpilot/contracts';
import { Tag, Tooltip } from 'antd';
import { GRADE_COLORS, gradeLabel } from '../utils/call-format';

/**
 * An intent grade in its colour. A human grade is marked, since it overrides the machine's;
 * `compact` shows the letter alone (the full label as its tooltip) where space is short.
 */
export function CallGradeTag({
  grade,
  human = false,
  compact = false,
}: {
  grade: IntentGrade | null;
  human?: boolean;
  compact?: boolean;
}) {
  if (!grade) return <span className="text-gray-400">-</span>;
  const tag = (
    <Tag color={GRADE_COLORS[grade]} className="!m-0">
      {compact ? grade : gradeLabel(grade)}
    </Tag>
  );
  return (
    <span className="inline-flex items-center gap-1">
      {compact ? <Tooltip title={gradeLabel(grade)}>{tag}</Tooltip> : tag}
      {human && (
        <Tooltip title="人工复核的等级">
          <span className="text-xs text-orange-500">人工</span>
        </Tooltip>
      )}
    </span>
  );
}
