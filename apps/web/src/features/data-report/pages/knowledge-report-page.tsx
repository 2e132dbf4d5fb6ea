import type { KnowledgeReport } from '@callpilot/contracts';
import { Select, Table } from 'antd';
import { useMemo } from 'react';
import { selectCurrentProjectId, useUserStore } from '@/stores/user-store';
import { useKnowledgeReport } from '../api/get-knowledge-report';
import { KnowledgeGapList } from '../components/knowledge-gap-list';
import { ReportEmpty } from '../components/report-empty';
import { ReportFigureCard } from '../components/report-figure-card';
import { ReportFrame } from '../components/report-frame';
import { ReportRowsTable } from '../components/report-rows-table';
import { ReportSection } from '../components/report-section';
import { ReportTrend } from '../components/report-trend';
import { useReportQuery } from '../utils/use-report-query';

/** 知识库统计: how often callers' questions found an answer, and the questions that did not. */
export function KnowledgeReportPage() {
  const projectId = useUserStore(selectCurrentProjectId) ?? '';
  const report = useReportQuery();
  const { data, isPending, isError } = useKnowledgeReport(projectId, report.query);

  return (
    <ReportFrame
      projectId={projectId}
      report={report}
      exportName="knowledge"
      title="知识库统计"
      loading={isPending}
      failed={isError}
      filters={
        <Select
          aria-label="知识库"
          allowClear
          placeholder="全部知识库"
          className="w-44"
          value={report.query?.knowledgeBaseId}
          options={(data?.byKnowledgeBase ?? []).map((row) => ({ value: row.key, label: row.label }))}
          onChange={(value?: string) => report.update({ knowledgeBaseId: value })}
        />
      }
    >
      {data ? <KnowledgeReportBody report={data} /> : null}
      {report.query ? <KnowledgeGapList projectId={projectId} query={report.query} /> : null}
    </ReportFrame>
  );
}

function KnowledgeReportBody({ report }: { report: KnowledgeReport }) {
  const { figures } = report;
  // The list has no knowledge filter: a bucket opens its calls, among them those that asked (as the figures).
  const trendDrills = useMemo(() => {
    const drill = figures.questions.drill;
    return { questions: drill, hits: drill, noAnswer: drill };
  }, [figures.questions.drill]);
  return (
    <div className="flex flex-col gap-4">
      <div className="grid grid-cols-3 gap-3">
        <ReportFigureCard title="知识库提问" figure={figures.questions} />
        <ReportFigureCard title="命中率" figure={figures.hitRate} kind="rate" />
        <ReportFigureCard title="未命中率" figure={figures.noAnswerRate} kind="rate" upIsGood={false} />
      </div>
      {figures.questions.value === 0 ? (
        <ReportEmpty
          text="还没有知识库提问：为小助手关联知识库后，通话中客户的提问会统计在这里。"
          link={{ to: '/knowledge', label: '去知识库' }}
        />
      ) : (
        <>
          <ReportSection title="提问趋势">
            <ReportTrend series={report.trend} label="知识库提问趋势图" drills={trendDrills} />
          </ReportSection>
          <ReportSection title="按知识库">
            <ReportRowsTable rows={report.byKnowledgeBase} keyTitle="知识库" label="按知识库统计" />
          </ReportSection>
          <ReportSection title="命中最多的内容">
            <Table
              aria-label="命中最多的内容"
              size="small"
              rowKey="segmentId"
              pagination={false}
              dataSource={report.topSegments}
              columns={[
                { title: '文档', dataIndex: 'documentName', key: 'documentName', width: 200 },
                { title: '内容', dataIndex: 'content', key: 'content', ellipsis: true },
                { title: '命中次数', dataIndex: 'hits', key: 'hits', align: 'right', width: 100 },
              ]}
            />
          </ReportSection>
        </>
      )}
    </div>
  );
}
