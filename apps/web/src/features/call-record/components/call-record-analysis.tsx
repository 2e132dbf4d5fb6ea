import { type CallDetail, INTENT_GRADE_LABELS, type IntentGrade } from '@callpilot/contracts';
import { Button, Descriptions, Select, Space } from 'antd';
import { useState } from 'react';
import { toast } from 'sonner';
import { useCallTags } from '@/entities/call/api/get-call-tags';
import { CallGradeTag } from '@/entities/call/components/call-grade-tag';
import { formatCallTime } from '@/entities/call/utils/call-format';
import { useCanWrite } from '@/hooks/use-project-role';
import { useUpdateCallGrade } from '../api/update-call-grade';
import { useUpdateCallTags } from '../api/update-call-tags';

const CLEAR = 'clear';
const gradeOptions = [
  ...(Object.entries(INTENT_GRADE_LABELS) as [IntentGrade, string][]).map(([value, label]) => ({
    value,
    label: `${value} ${label}`,
  })),
  { value: CLEAR, label: '清除（使用机器评级）' },
];

const ANALYSIS_BY_LABELS = { llm: '大模型分析', rules: '规则分析' } as const;

function TagsEditor({ projectId, call }: { projectId: string; call: CallDetail }) {
  const [tags, setTags] = useState(call.tags);
  const known = useCallTags(projectId);
  const save = useUpdateCallTags(projectId, call.id);
  const changed = tags.join('\n') !== call.tags.join('\n');
  const canWrite = useCanWrite();
  return (
    <Space.Compact className="w-full">
      <Select
        aria-label="通话标签"
        mode="tags"
        className="min-w-0 flex-1"
        placeholder="输入后回车添加标签"
        value={tags}
        maxCount={10}
        disabled={!canWrite}
        onChange={(next: string[]) => setTags(next.map((tag) => tag.trim().slice(0, 20)).filter(Boolean))}
        options={(known.data ?? []).map((tag) => ({ value: tag, label: tag }))}
      />
      <Button
        disabled={!changed || !canWrite}
        loading={save.isPending}
        onClick={() => save.mutate(tags, { onSuccess: () => toast.success('标签已保存') })}
      >
        保存标签
      </Button>
    </Space.Compact>
  );
}

export function CallRecordAnalysis({ projectId, call }: { projectId: string; call: CallDetail }) {
  const regrade = useUpdateCallGrade(projectId, call.id);
  const canWrite = useCanWrite();
  const fields = Object.entries(call.fields);
  return (
    <section
      aria-label="通话分析"
      className="flex flex-col gap-4 rounded-lg border border-gray-200 bg-white p-4"
    >
      <h2 className="text-base font-semibold text-gray-900">通话分析</h2>
      <Descriptions
        size="small"
        column={1}
        items={[
          {
            key: 'machine',
            label: '机器评级',
            children: (
              <span className="inline-flex items-center gap-2">
                <CallGradeTag grade={call.machineGrade} />
                {call.analysisBy && (
                  <span className="text-xs text-gray-400">{ANALYSIS_BY_LABELS[call.analysisBy]}</span>
                )}
              </span>
            ),
          },
          { key: 'reason', label: '评级理由', children: call.gradeReason || '-' },
          { key: 'summary', label: '通话摘要', children: call.summary || '-' },
          ...fields.map(([name, value]) => ({ key: `field-${name}`, label: name, children: value || '-' })),
        ]}
      />
      <div className="flex flex-col gap-2">
        <h3 className="text-sm font-medium text-gray-700">人工复核</h3>
        <Select
          aria-label="人工评级"
          placeholder="选择人工评级"
          value={call.humanGrade ?? undefined}
          loading={regrade.isPending}
          disabled={regrade.isPending || !canWrite}
          options={gradeOptions}
          onChange={(value: string) =>
            regrade.mutate(value === CLEAR ? null : (value as IntentGrade), {
              onSuccess: () => toast.success(value === CLEAR ? '已清除人工评级' : '已保存人工评级'),
            })
          }
        />
        {call.humanGrade && (
          <p className="text-xs text-gray-500">
            {call.humanGradedBy || '-'} 于 {formatCallTime(call.humanGradedAt)} 复核
          </p>
        )}
      </div>
      <div className="flex flex-col gap-2">
        <h3 className="text-sm font-medium text-gray-700">标签</h3>
        {/* Keyed by the saved tags so a save or a live update reseeds the editor. */}
        <TagsEditor key={call.tags.join('\n')} projectId={projectId} call={call} />
      </div>
    </section>
  );
}
