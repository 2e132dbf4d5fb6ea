import type { NumberHealthRow } from '@callpilot/contracts';
import { Alert, Button, Table, Tag } from 'antd';
import { useMemo } from 'react';
import { DrillChart } from '@/components/drill-chart';
import { useRestProjectNumber } from '@/entities/project-number/api/rest-project-number';
import { chinaTime } from '@/lib/format';
import { useUserStore } from '@/stores/user-store';
import { useNumberHealth } from '../api/get-number-health';
import { reportKeys } from '../api/report-keys';
import { bucketDrill, type ChartDrill } from '../utils/report-chart-drills';
import { bucketLabel } from '../utils/report-charts';
import { percent } from '../utils/report-format';
import type { ReportQuery } from '../utils/report-range';
import { ReportDrillLink } from './report-drill-link';
import { ReportEmpty } from './report-empty';
import { ReportSection } from './report-section';

/**
 * 外显号码健康度: a caller number whose answer rate falls sharply against its own history is
 * likely marked as spam by callees' phones; resting it for a while is the usual remedy.
 */
export function NumberHealthSection({ projectId, query }: { projectId: string; query: ReportQuery }) {
  const { data, isPending, isError } = useNumberHealth(projectId, query);
  // Resting is an owner/admin action (the server refuses members); members see the state only.
  const canManage = useUserStore((state) => state.userInfo.isOwnerOrAdmin);
  const rest = useRestProjectNumber(projectId, [
    [...reportKeys.all(projectId)],
    ['projects', projectId, 'dashboard'],
  ]);
  const restButton = (row: NumberHealthRow) =>
    canManage && row.projectNumber ? (
      <Button
        size="small"
        type={row.restingSince || !row.warning ? 'link' : 'primary'}
        loading={rest.isPending && rest.variables?.number === row.number}
        aria-label={`${row.restingSince ? '恢复' : '休息'} ${row.number}`}
        onClick={() => rest.mutate({ number: row.number, resting: !row.restingSince })}
      >
        {row.restingSince ? '恢复使用' : '休息'}
      </Button>
    ) : null;
  const rows = data?.rows ?? [];
  const option = useMemo(() => {
    const first = rows[0]?.trend ?? [];
    return {
      tooltip: { trigger: 'axis' },
      legend: { data: rows.map((row) => row.number) },
      grid: { left: 48, right: 24, top: 36, bottom: 32 },
      xAxis: { type: 'category', data: first.map((point) => bucketLabel(point.at, 'day')) },
      yAxis: {
        type: 'value',
        max: 1,
        axisLabel: { formatter: (value: number) => `${Math.round(value * 100)}%` },
      },
      series: rows.map((row) => ({
        name: row.number,
        type: 'line',
        connectNulls: false,
        data: row.trend.map((point) => point.answerRate),
      })),
    };
  }, [rows]);
  // A point is a number's answer rate of a day: it opens that number's calls of the day.
  const drill = useMemo<ChartDrill>(
    () =>
      ({ seriesIndex, dataIndex }) => {
        const row = rows[seriesIndex];
        const point = row?.trend[dataIndex];
        return row && point ? bucketDrill(row.drill, point.at, 'day') : null;
      },
    [rows],
  );
  // A warned number already resting needs no more advice.
  const warned = rows.filter((row) => row.warning && !row.restingSince);

  return (
    <ReportSection title="外显号码健康度">
      {isError ? (
        <Alert type="error" showIcon title="号码健康度加载失败，请稍后重试。" />
      ) : isPending ? null : rows.length === 0 ? (
        <ReportEmpty
          text="所选时间段内没有外呼：创建外呼任务后，这里会显示每个外显号码的接通情况。"
          link={{ to: '/call-task/list', label: '去外呼任务' }}
        />
      ) : (
        <div className="flex flex-col gap-3">
          {warned.map((row) => (
            <Alert
              key={row.number}
              type="warning"
              showIcon
              title={`${row.number} 接通率明显下降（${percent(row.answerRate)}，此前 ${
                row.baselineAnswerRate === null ? '—' : percent(row.baselineAnswerRate)
              }），可能已被标记为骚扰电话。建议暂停使用该号码（休息）：休息中的号码不用于呼出任务，仍接听呼入。`}
              action={restButton(row)}
            />
          ))}
          <DrillChart option={option} label="外显号码接通率趋势图" pickBy="axis" drill={drill} />
          <Table<NumberHealthRow>
            aria-label="外显号码健康度"
            size="small"
            rowKey="number"
            pagination={false}
            dataSource={rows}
            columns={[
              {
                title: '号码',
                key: 'number',
                render: (_, row) => (
                  <span>
                    {row.number}{' '}
                    {row.restingSince ? (
                      <Tag color="warning">休息中 · 自 {chinaTime(row.restingSince).format('MM-DD')}</Tag>
                    ) : row.warning ? (
                      <Tag color="orange">建议休息</Tag>
                    ) : null}
                  </span>
                ),
              },
              {
                title: '外呼量',
                key: 'calls',
                align: 'right',
                render: (_, row) => <ReportDrillLink drill={row.drill}>{row.calls}</ReportDrillLink>,
              },
              { title: '接通量', dataIndex: 'answered', key: 'answered', align: 'right' },
              {
                title: '接通率',
                key: 'answerRate',
                align: 'right',
                render: (_, row) => percent(row.answerRate),
              },
              {
                title: '近 28 天接通率',
                key: 'baseline',
                align: 'right',
                render: (_, row) => (row.baselineAnswerRate === null ? '—' : percent(row.baselineAnswerRate)),
              },
              {
                title: '短通话占比',
                key: 'short',
                align: 'right',
                render: (_, row) => percent(row.shortAnsweredShare),
              },
              { title: '拒接', dataIndex: 'rejected', key: 'rejected', align: 'right' },
              ...(canManage
                ? [
                    {
                      title: '操作',
                      key: 'rest',
                      render: (_: unknown, row: NumberHealthRow) => restButton(row),
                    },
                  ]
                : []),
            ]}
          />
        </div>
      )}
    </ReportSection>
  );
}
