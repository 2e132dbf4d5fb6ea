import type {
  AssistantReport,
  AssistantReportRow,
  IntentGrade,
  LatencyComponent,
} from '@callpilot/contracts';
import { Select, Table } from 'antd';
import { useMemo } from 'react';
import { DrillChart } from '@/components/drill-chart';
import { selectCurrentProjectId, useUserStore } from '@/stores/user-store';
import { useAssistantReport } from '../api/get-assistant-report';
import { NumberHealthSection } from '../components/number-health-section';
import { ReportDrillLink } from '../components/report-drill-link';
import { ReportEmpty } from '../components/report-empty';
import { ReportFrame } from '../components/report-frame';
import { ReportSection } from '../components/report-section';
import { ReportTrend } from '../components/report-trend';
import type { ChartDrill } from '../utils/report-chart-drills';
import { funnelOption, stackedBarOption } from '../utils/report-charts';
import { formatFigure, percent } from '../utils/report-format';
import { useReportQuery } from '../utils/use-report-query';

const GRADES: IntentGrade[] = ['A', 'B', 'C', 'D'];
const COMPONENT_LABELS: Record<LatencyComponent, string> = {
  recognition: '语音识别',
  retrieval: '知识检索',
  brain: '大模型',
  synthesis: '语音合成',
};

type AssistantTableRow = AssistantReportRow & { rowKey: string; children?: AssistantTableRow[] };

/** 小助手统计: each assistant and its versions, grades, hang-ups, latency and grading agreement. */
export function AssistantReportPage() {
  const projectId = useUserStore(selectCurrentProjectId) ?? '';
  const report = useReportQuery();
  const { data, isPending, isError } = useAssistantReport(projectId, report.query);
  const assistants = (data?.rows ?? []).filter((row) => row.version === null);

  return (
    <ReportFrame
      projectId={projectId}
      report={report}
      exportName="assistant"
      title="小助手统计"
      loading={isPending}
      failed={isError}
      filters={
        <Select
          aria-label="小助手"
          allowClear
          placeholder="全部小助手"
          className="w-44"
          value={report.query?.assistantId}
          options={assistants.map((row) => ({ value: row.assistantId, label: row.assistantName }))}
          onChange={(value?: string) => report.update({ assistantId: value })}
        />
      }
    >
      {data ? <AssistantReportBody report={data} /> : null}
      {report.query ? <NumberHealthSection projectId={projectId} query={report.query} /> : null}
    </ReportFrame>
  );
}

const versionLabel = (row: AssistantReportRow) =>
  row.version === null ? row.assistantName : `版本 ${row.version}`;

function AssistantReportBody({ report }: { report: AssistantReport }) {
  const tree = useMemo<AssistantTableRow[]>(() => {
    const totals = report.rows.filter((row) => row.version === null);
    return totals.map((total) => {
      const versions = report.rows
        .filter((row) => row.assistantId === total.assistantId && row.version !== null)
        .map((row) => ({ ...row, rowKey: `${row.assistantId}:${row.version}` }));
      return { ...total, rowKey: total.assistantId, ...(versions.length > 0 ? { children: versions } : {}) };
    });
  }, [report.rows]);
  const names = new Map(tree.map((row) => [row.assistantId, row.assistantName]));

  const gradesOption = useMemo(
    () =>
      stackedBarOption(
        tree.map((row) => row.assistantName),
        GRADES.map((grade) => ({ label: `${grade} 类`, values: tree.map((row) => row.grades[grade] ?? 0) })),
      ),
    [tree],
  );
  // A stacked bar is one grade (series) of one assistant (category), as the table's grade counts.
  const gradesDrill = useMemo<ChartDrill>(
    () =>
      ({ seriesIndex, dataIndex }) => {
        const row = tree[dataIndex];
        const grade = GRADES[seriesIndex];
        return row && grade ? { ...row.drill, intentGrade: grade } : null;
      },
    [tree],
  );
  const trendDrills = useMemo(() => assistantTrendDrills(tree), [tree]);
  const hangupOption = useMemo(
    () =>
      funnelOption(
        report.hangupFunnel.map((step) => ({
          label: step.turn >= 30 ? '30 轮及以上' : `第 ${step.turn} 轮`,
          value: step.calls,
        })),
      ),
    [report.hangupFunnel],
  );

  if (tree.length === 0) {
    return (
      <ReportEmpty
        text="还没有小助手通话：发布小助手并创建外呼任务或绑定呼入号码后，这里会显示各版本的效果。"
        link={{ to: '/assistant/list', label: '去小助手' }}
      />
    );
  }

  return (
    <div className="flex flex-col gap-4">
      <ReportSection title="小助手与版本">
        <Table<AssistantTableRow>
          aria-label="小助手统计"
          size="small"
          rowKey="rowKey"
          pagination={false}
          dataSource={tree}
          columns={[
            { title: '小助手 / 版本', key: 'name', render: (_, row) => versionLabel(row) },
            {
              title: '通话量',
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
              title: '平均轮次',
              key: 'avgTurns',
              align: 'right',
              render: (_, row) => row.avgTurns.toFixed(1),
            },
            {
              title: '平均通话时长',
              key: 'avgTalkSeconds',
              align: 'right',
              render: (_, row) => formatFigure(row.avgTalkSeconds, 'seconds'),
            },
            ...GRADES.map((grade) => ({
              title: `${grade} 类`,
              key: `grade-${grade}`,
              align: 'right' as const,
              render: (_: unknown, row: AssistantTableRow) => (
                <ReportDrillLink drill={{ ...row.drill, intentGrade: grade }}>
                  {row.grades[grade] ?? 0}
                </ReportDrillLink>
              ),
            })),
            {
              title: '转人工率',
              key: 'transferRate',
              align: 'right',
              render: (_, row) => percent(row.transferRate),
            },
            {
              title: '拒绝率',
              key: 'optOutRate',
              align: 'right',
              render: (_, row) => percent(row.optOutRate),
            },
          ]}
        />
      </ReportSection>
      <ReportSection title="通话趋势">
        <ReportTrend series={report.trend} label="小助手通话趋势图" drills={trendDrills} />
      </ReportSection>
      <ReportSection title="意向等级分布">
        <DrillChart option={gradesOption} label="意向等级分布图" drill={gradesDrill} />
      </ReportSection>
      <ReportSection title="挂断漏斗（接通后对方在第几轮挂断）">
        {report.hangupFunnel.length > 0 ? (
          <DrillChart
            option={hangupOption}
            label="挂断漏斗图"
            height={320}
            drill={({ dataIndex }) => report.hangupFunnel[dataIndex]?.drill ?? null}
          />
        ) : (
          <ReportEmpty text="所选时间段内没有对方挂断的接通通话。" />
        )}
      </ReportSection>
      <ReportSection title="响应耗时">
        <Table
          aria-label="响应耗时"
          size="small"
          rowKey="component"
          pagination={false}
          dataSource={report.latency}
          columns={[
            { title: '环节', key: 'component', render: (_, row) => COMPONENT_LABELS[row.component] },
            {
              title: 'P50',
              key: 'p50',
              align: 'right',
              render: (_, row) => (row.p50Ms === null ? '—' : formatFigure(row.p50Ms, 'ms')),
            },
            {
              title: 'P95',
              key: 'p95',
              align: 'right',
              render: (_, row) => (row.p95Ms === null ? '—' : formatFigure(row.p95Ms, 'ms')),
            },
            { title: '样本数', dataIndex: 'samples', key: 'samples', align: 'right' },
          ]}
        />
      </ReportSection>
      <GradingSection grading={report.grading} names={names} />
    </div>
  );
}

/**
 * The trend sums every assistant of the report; the list can show one assistant's calls, not
 * "calls with any assistant", so the trend drills when the report holds one assistant (chosen in
 * the filter or the only one). Opt-outs have no list filter.
 */
function assistantTrendDrills(tree: AssistantReportRow[]) {
  const [only] = tree;
  if (tree.length !== 1 || !only) return {};
  return {
    calls: only.drill,
    answered: { ...only.drill, answered: 'yes' },
    transferred: { ...only.drill, transferred: 'yes' },
  };
}

function GradingSection({
  grading,
  names,
}: {
  grading: AssistantReport['grading'];
  names: Map<string, string>;
}) {
  type GradingRow = AssistantReport['grading'][number];
  return (
    <ReportSection title="评级一致性（人工复核与机器评级）">
      {grading.length === 0 ? (
        <ReportEmpty text="所选时间段内还没有人工复核过评级的通话：在通话详情里修改意向等级后，这里会显示机器评级的准确度。" />
      ) : (
        <Table<GradingRow>
          aria-label="评级一致性"
          size="small"
          rowKey={(row) => `${row.assistantId}:${row.version ?? 'all'}`}
          pagination={false}
          dataSource={grading}
          expandable={{
            expandedRowRender: (row) => <ConfusionMatrix matrix={row.matrix} />,
          }}
          columns={[
            {
              title: '小助手 / 版本',
              key: 'name',
              render: (_, row) =>
                `${row.assistantName || names.get(row.assistantId) || row.assistantId}${row.version === null ? '' : ` 版本 ${row.version}`}`,
            },
            {
              title: '人工复核',
              key: 'regraded',
              align: 'right',
              render: (_, row) => <ReportDrillLink drill={row.drill}>{row.regraded}</ReportDrillLink>,
            },
            { title: '一致', dataIndex: 'agreed', key: 'agreed', align: 'right' },
            {
              title: '一致率',
              key: 'agreement',
              align: 'right',
              render: (_, row) => (row.regraded === 0 ? '—' : percent(row.agreed / row.regraded)),
            },
          ]}
        />
      )}
    </ReportSection>
  );
}

/** Machine grade (rows) against the person's grade (columns); the diagonal is agreement. */
function ConfusionMatrix({ matrix }: { matrix: AssistantReport['grading'][number]['matrix'] }) {
  return (
    <table aria-label="混淆矩阵" className="text-sm">
      <thead>
        <tr>
          <th className="px-3 py-1 text-left text-gray-500">机器 \ 人工</th>
          {GRADES.map((grade) => (
            <th key={grade} className="px-3 py-1">
              {grade}
            </th>
          ))}
        </tr>
      </thead>
      <tbody>
        {GRADES.map((machine) => (
          <tr key={machine}>
            <th className="px-3 py-1 text-left">{machine}</th>
            {GRADES.map((human) => (
              <td
                key={human}
                className={`px-3 py-1 text-right ${machine === human ? 'font-semibold text-green-700' : ''}`}
              >
                {matrix[machine]?.[human] ?? 0}
              </td>
            ))}
          </tr>
        ))}
      </tbody>
    </table>
  );
}
