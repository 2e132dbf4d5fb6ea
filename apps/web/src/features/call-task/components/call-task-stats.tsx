import {
  END_REASON_LABELS,
  type EndReason,
  INTENT_GRADE_LABELS,
  type TaskDetail,
} from '@callpilot/contracts';
import { Progress, Tag } from 'antd';
import type { ReactNode } from 'react';
import { formatPercent } from '@/lib/format';
import { answerRateOf, formatDuration, GRADE_BAR_COLORS, GRADES } from '../utils/call-task-format';

function StatCard({ label, value, hint }: { label: string; value: ReactNode; hint?: ReactNode }) {
  return (
    <div className="flex flex-col gap-1 rounded-lg border border-gray-200 bg-white p-4">
      <dt className="text-sm text-gray-500">{label}</dt>
      <dd className="text-2xl font-semibold text-gray-900">{value}</dd>
      {hint && <dd className="text-xs text-gray-500">{hint}</dd>}
    </div>
  );
}

export function CallTaskStats({ task }: { task: TaskDetail }) {
  const { counts } = task;
  const live = task.state === 'running' || task.state === 'pending';
  const reasons = (Object.entries(counts.byEndReason) as [EndReason, number][])
    .filter(([, count]) => count > 0)
    .sort((a, b) => b[1] - a[1]);
  const graded = GRADES.reduce((sum, grade) => sum + (counts.byGrade[grade] ?? 0), 0);

  return (
    <div className="flex flex-col gap-4">
      <dl aria-label="任务统计" className="grid grid-cols-2 gap-3 md:grid-cols-5">
        <StatCard
          label="联系人"
          value={counts.total.toLocaleString('zh-CN')}
          hint={`待呼叫 ${counts.waiting}`}
        />
        <StatCard
          label="已完成"
          value={counts.finished.toLocaleString('zh-CN')}
          hint={`已跳过 ${counts.skipped}`}
        />
        <StatCard label="呼叫中" value={task.activeCalls} hint={`并发上限 ${task.concurrency} 路`} />
        <StatCard
          label="接通率"
          value={formatPercent(answerRateOf(counts))}
          hint={`${counts.answered} 接通 / ${counts.calls} 次呼叫`}
        />
        <StatCard
          label="预计剩余时间"
          value={live || task.state === 'paused' ? formatDuration(task.etaSeconds) : '-'}
        />
      </dl>
      <div className="flex items-center gap-3">
        <span className="shrink-0 text-sm text-gray-600">进度</span>
        <Progress
          aria-label="任务进度"
          percent={Math.round(task.progress * 100)}
          status={live ? 'active' : 'normal'}
          format={() => `${counts.finished}/${counts.total}`}
        />
      </div>
      <div className="grid grid-cols-1 gap-4 md:grid-cols-2">
        <section aria-label="结果分布" className="rounded-lg border border-gray-200 bg-white p-4">
          <h3 className="mb-3 text-sm font-medium text-gray-900">呼叫结果</h3>
          {reasons.length === 0 ? (
            <p className="text-sm text-gray-500">还没有结束的通话</p>
          ) : (
            <div className="flex flex-wrap gap-2">
              {reasons.map(([reason, count]) => (
                <Tag key={reason} className="!m-0">
                  {END_REASON_LABELS[reason]} {count}
                </Tag>
              ))}
            </div>
          )}
        </section>
        <section aria-label="意向分布" className="rounded-lg border border-gray-200 bg-white p-4">
          <h3 className="mb-3 text-sm font-medium text-gray-900">意向等级</h3>
          {graded === 0 ? (
            <p className="text-sm text-gray-500">还没有评出意向等级的通话</p>
          ) : (
            <ul className="flex flex-col gap-2">
              {GRADES.map((grade) => {
                const count = counts.byGrade[grade] ?? 0;
                const share = count / graded;
                return (
                  <li key={grade} className="flex items-center gap-2 text-sm">
                    <span className="w-28 shrink-0 text-gray-700">
                      {grade} {INTENT_GRADE_LABELS[grade]}
                    </span>
                    <span className="h-3 flex-1 overflow-hidden rounded bg-gray-100">
                      <span
                        className="block h-full rounded"
                        style={{ width: `${share * 100}%`, backgroundColor: GRADE_BAR_COLORS[grade] }}
                      />
                    </span>
                    <span className="w-20 shrink-0 text-right text-gray-600">
                      {count}（{formatPercent(share)}）
                    </span>
                  </li>
                );
              })}
            </ul>
          )}
        </section>
      </div>
    </div>
  );
}
