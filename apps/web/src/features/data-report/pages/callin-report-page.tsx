import type { CallinReport } from '@callpilot/contracts';
import { Select, Table } from 'antd';
import { useMemo } from 'react';
import { DrillChart } from '@/components/drill-chart';
import { paths } from '@/config/paths';
import { selectCurrentProjectId, useUserStore } from '@/stores/user-store';
import { useCallinReport } from '../api/get-callin-report';
import { ReportDrillLink } from '../components/report-drill-link';
import { ReportEmpty } from '../components/report-empty';
import { ReportFigureCard } from '../components/report-figure-card';
import { ReportFrame } from '../components/report-frame';
import { ReportRowsTable } from '../components/report-rows-table';
import { ReportSection } from '../components/report-section';
import { ReportTrend } from '../components/report-trend';
import { type ChartDrill, heatCellDrill } from '../utils/report-chart-drills';
import { barOption, funnelOption, heatmapOption } from '../utils/report-charts';
import type { FigureKind } from '../utils/report-format';
import { useReportQuery } from '../utils/use-report-query';

type FigureKey = keyof CallinReport['figures'];

const FIGURES: { key: FigureKey; title: string; kind?: FigureKind; upIsGood?: boolean }[] = [
  { key: 'offered', title: '呼入总量' },
  { key: 'answered', title: '接通量' },
  { key: 'answerRate', title: '接通率', kind: 'rate' },
  { key: 'assistantAnswered', title: '小助手接待' },
  { key: 'transferred', title: '转人工', upIsGood: false },
  { key: 'abandonedRinging', title: '振铃放弃', upIsGood: false },
  { key: 'abandonedFlow', title: '流程中挂断', upIsGood: false },
  { key: 'overLimit', title: '超出并发', upIsGood: false },
  { key: 'avgWaitSeconds', title: '平均等待', kind: 'seconds', upIsGood: false },
  { key: 'maxWaitSeconds', title: '最长等待', kind: 'seconds', upIsGood: false },
  { key: 'avgTalkSeconds', title: '平均通话时长', kind: 'seconds' },
  { key: 'maxTalkSeconds', title: '最长通话时长', kind: 'seconds' },
];

/** 呼入统计: how inbound calls were answered, when they come, by number and by flow. */
export function CallinReportPage() {
  const projectId = useUserStore(selectCurrentProjectId) ?? '';
  const report = useReportQuery();
  const { data, isPending, isError } = useCallinReport(projectId, report.query);
  const flowId = report.query?.flowId;
  const lineNumber = report.query?.lineNumber;

  const filters = (
    <>
      <Select
        aria-label="号码"
        allowClear
        showSearch
        placeholder="全部号码"
        className="w-44"
        value={lineNumber}
        options={(data?.byNumber ?? []).map((row) => ({ value: row.key, label: row.label }))}
        onChange={(value?: string) => report.update({ lineNumber: value })}
      />
      <Select
        aria-label="呼入流程"
        allowClear
        placeholder="全部流程"
        className="w-44"
        value={flowId}
        options={(data?.byFlow ?? []).map((row) => ({ value: row.key, label: row.label }))}
        onChange={(value?: string) => report.update({ flowId: value })}
      />
    </>
  );

  return (
    <ReportFrame
      projectId={projectId}
      report={report}
      exportName="callin"
      title="呼入统计"
      filters={filters}
      loading={isPending}
      failed={isError}
    >
      {data ? <CallinReportBody report={data} flowChosen={Boolean(flowId)} /> : null}
    </ReportFrame>
  );
}

function CallinReportBody({ report, flowChosen }: { report: CallinReport; flowChosen: boolean }) {
  const within = report.answeredWithin;
  const withinOption = useMemo(
    () =>
      barOption(
        within.map((bucket) => bucket.label),
        '接通量',
        within.map((bucket) => bucket.count),
      ),
    [within],
  );
  const withinDrill = useMemo<ChartDrill>(
    () =>
      ({ dataIndex }) =>
        within[dataIndex]?.drill ?? null,
    [within],
  );
  const heatmap = useMemo(() => heatmapOption(report.heatmap), [report.heatmap]);
  // A cell counts offered calls; an empty cell has no calls to open.
  const heatmapDrill = useMemo<ChartDrill>(
    () =>
      ({ dataIndex }) => {
        const cell = report.heatmap[dataIndex];
        return cell && cell.value > 0
          ? heatCellDrill(report.figures.offered.drill, report.range, cell)
          : null;
      },
    [report.heatmap, report.figures.offered.drill, report.range],
  );
  const { figures } = report;
  // The trend's abandoned calls join two figures (ringing, in the flow): no one list filter.
  const trendDrills = useMemo(
    () => ({
      offered: figures.offered.drill,
      answered: figures.answered.drill,
      assistantAnswered: figures.assistantAnswered.drill,
      transferred: figures.transferred.drill,
      overLimit: figures.overLimit.drill,
    }),
    [figures],
  );
  const funnel = useMemo(
    () =>
      report.flowFunnel
        ? funnelOption(report.flowFunnel.map((node) => ({ label: node.label, value: node.calls })))
        : null,
    [report.flowFunnel],
  );

  return (
    <div className="flex flex-col gap-4">
      <div className="grid grid-cols-2 gap-3 md:grid-cols-4 xl:grid-cols-6">
        {FIGURES.map((figure) => (
          <ReportFigureCard
            key={figure.key}
            title={figure.title}
            figure={report.figures[figure.key]}
            kind={figure.kind}
            upIsGood={figure.upIsGood}
          />
        ))}
      </div>
      {report.figures.offered.value === 0 ? (
        <ReportEmpty
          text="还没有呼入电话：为号码绑定呼入流程或小助手后，这里会显示接听情况。"
          link={{ to: paths.ivrNumbers, label: '去号码管理' }}
        />
      ) : (
        <>
          <ReportSection title="接听时效">
            <DrillChart option={withinOption} label="接听时效分布图" height={220} drill={withinDrill} />
            <Table
              aria-label="接听时效"
              size="small"
              rowKey="label"
              pagination={false}
              dataSource={within}
              columns={[
                { title: '接听用时', dataIndex: 'label', key: 'label' },
                {
                  title: '接通量',
                  key: 'count',
                  align: 'right',
                  render: (_: unknown, bucket: (typeof within)[number]) => (
                    <ReportDrillLink drill={bucket.drill}>{bucket.count}</ReportDrillLink>
                  ),
                },
              ]}
            />
          </ReportSection>
          <ReportSection title="呼入趋势">
            <ReportTrend series={report.trend} label="呼入趋势图" drills={trendDrills} />
          </ReportSection>
          <ReportSection title="来电时段分布（星期 × 小时）">
            <DrillChart option={heatmap} label="来电时段热力图" height={300} drill={heatmapDrill} />
          </ReportSection>
          <ReportSection title="按号码">
            <ReportRowsTable rows={report.byNumber} keyTitle="号码" label="按号码统计" />
          </ReportSection>
          <ReportSection title="按流程">
            {flowChosen && funnel && report.flowFunnel && report.flowFunnel.length > 0 ? (
              <DrillChart
                option={funnel}
                label="流程漏斗图"
                height={300}
                drill={({ dataIndex }) => report.flowFunnel?.[dataIndex]?.drill ?? null}
              />
            ) : (
              <p className="mb-2 text-sm text-gray-500">
                在上方选择一个呼入流程，可查看来电在各节点的流失漏斗。
              </p>
            )}
            <ReportRowsTable rows={report.byFlow} keyTitle="流程" label="按流程统计" />
          </ReportSection>
        </>
      )}
    </div>
  );
}
