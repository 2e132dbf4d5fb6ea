import {
  KNOWLEDGE_BATCH_OUTCOME_LABELS,
  type KnowledgeBatchComparison,
  type KnowledgeBatchItem,
  type KnowledgeBatchOutcome,
  type KnowledgeBatchTest,
  knowledgeBatchOutcome,
} from '@callpilot/contracts';
import { Alert, Button, Empty, Select, Statistic, Table, type TableColumnsType, Tag } from 'antd';
import { useState } from 'react';
import { serverPagination } from '@/components/server-pagination';
import { useCompareKnowledgeBatchTests } from '../api/compare-knowledge-batch-tests';
import { useDownloadSkippedRows } from '../api/download-knowledge-batch-files';
import { useKnowledgeBatchTestItems } from '../api/get-knowledge-batch-test-items';
import {
  BATCH_FIGURES,
  BATCH_OUTCOME_COLORS,
  formatDelta,
  formatFigure,
} from '../utils/knowledge-batch-format';
import { formatScore, formatTime, RETRIEVAL_MODE_LABELS } from '../utils/knowledge-format';

type Props = {
  projectId: string;
  knowledgeBaseId: string;
  test: KnowledgeBatchTest;
  /** Finished runs before this one, to compare with. */
  earlier: KnowledgeBatchTest[];
};

const OUTCOME_OPTIONS = [
  { value: '', label: '全部结果' },
  ...knowledgeBatchOutcome.options.map((value) => ({ value, label: KNOWLEDGE_BATCH_OUTCOME_LABELS[value] })),
];

const outcomeTag = (outcome: KnowledgeBatchOutcome) => (
  <Tag color={BATCH_OUTCOME_COLORS[outcome]}>{KNOWLEDGE_BATCH_OUTCOME_LABELS[outcome]}</Tag>
);

const itemColumns: TableColumnsType<KnowledgeBatchItem> = [
  { title: '序号', dataIndex: 'position', width: 64 },
  { title: '问题', dataIndex: 'question', ellipsis: true },
  {
    title: '期望答案',
    dataIndex: 'expected',
    ellipsis: true,
    render: (expected: string | null) => expected ?? <span className="text-gray-400">（不应回答）</span>,
  },
  { title: '结果', dataIndex: 'outcome', width: 120, render: outcomeTag },
  { title: '置信度', dataIndex: 'confidence', width: 80, render: (c: number) => formatScore(c) },
  {
    title: '期望答案排名',
    dataIndex: 'expectedRank',
    width: 110,
    render: (rank: number | null, item) => (item.expected === null ? '-' : (rank ?? '未召回')),
  },
  {
    title: '首个命中',
    dataIndex: 'topText',
    ellipsis: true,
    render: (text: string | null) => text ?? <span className="text-gray-400">无</span>,
  },
];

function ChangedQuestions({
  title,
  list,
  tone,
}: {
  title: string;
  list: KnowledgeBatchComparison['improved'];
  tone: 'good' | 'bad';
}) {
  return (
    <section aria-label={title} className="flex-1 rounded-lg border border-gray-200 p-3">
      <h4 className={`mb-2 text-sm font-semibold ${tone === 'good' ? 'text-green-700' : 'text-red-600'}`}>
        {`${title}（${list.length}）`}
      </h4>
      {list.length === 0 ? (
        <p className="text-xs text-gray-400">无</p>
      ) : (
        <ul className="m-0 flex list-none flex-col gap-1 p-0 text-sm">
          {list.map((change) => (
            <li key={change.question} className="flex flex-wrap items-center gap-2">
              <span className="text-gray-900">{change.question}</span>
              <span className="text-xs text-gray-500">
                {`${KNOWLEDGE_BATCH_OUTCOME_LABELS[change.before]} → ${KNOWLEDGE_BATCH_OUTCOME_LABELS[change.after]}`}
              </span>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

function Comparison({ comparison }: { comparison: KnowledgeBatchComparison }) {
  return (
    <div className="flex flex-col gap-3">
      <p className="text-xs text-gray-500">{`两次测试共有 ${comparison.common} 个相同的问题`}</p>
      <dl aria-label="指标变化" className="m-0 flex flex-wrap gap-x-6 gap-y-2">
        {BATCH_FIGURES.map((figure) => {
          const delta = figure.value(comparison.current.metrics) - figure.value(comparison.previous.metrics);
          const good = figure.better === 'up' ? delta > 0 : delta < 0;
          const color = Math.abs(delta) < 1e-9 ? 'text-gray-500' : good ? 'text-green-700' : 'text-red-600';
          return (
            <div key={figure.key} className="flex items-baseline gap-1">
              <dt className="text-xs text-gray-500">{figure.label}</dt>
              <dd className={`m-0 font-mono text-sm ${color}`}>{formatDelta(delta, figure.kind)}</dd>
            </div>
          );
        })}
      </dl>
      <div className="flex flex-col gap-3 md:flex-row">
        <ChangedQuestions title="变好的问题" list={comparison.improved} tone="good" />
        <ChangedQuestions title="变差的问题" list={comparison.regressed} tone="bad" />
      </div>
    </div>
  );
}

export function KnowledgeBatchTestDetail({ projectId, knowledgeBaseId, test, earlier }: Props) {
  const [params, setParams] = useState<{ page: number; pageSize: number; outcome?: KnowledgeBatchOutcome }>({
    page: 1,
    pageSize: 20,
  });
  const [compareWith, setCompareWith] = useState<string | undefined>();
  const items = useKnowledgeBatchTestItems(projectId, knowledgeBaseId, test, params);
  const comparison = useCompareKnowledgeBatchTests(
    projectId,
    knowledgeBaseId,
    test.id,
    test.status === 'done' ? compareWith : undefined,
  );
  const skipped = useDownloadSkippedRows(projectId, knowledgeBaseId);

  return (
    <section aria-label="测试详情" className="flex flex-col gap-4 rounded-lg border border-gray-200 p-4">
      <header className="flex flex-wrap items-baseline gap-3">
        <h3 className="m-0 text-base font-semibold text-gray-900">{`${test.fileName} 的测试结果`}</h3>
        <span className="text-xs text-gray-500">
          {`${formatTime(test.createdAt)} · 阈值 ${formatScore(test.threshold)} · ${RETRIEVAL_MODE_LABELS[test.mode]} · 共 ${test.metrics.total} 个问题（应回答 ${test.metrics.answerable}，不应回答 ${test.metrics.unanswerable}）`}
        </span>
      </header>
      {test.status === 'running' && (
        <Alert type="info" showIcon message={`测试进行中（${test.progress}%），结果会随进度刷新`} />
      )}
      {test.status === 'failed' && <Alert type="error" showIcon message={test.error || '测试失败'} />}
      {test.skipped > 0 && (
        <p className="flex flex-wrap items-center gap-1 text-sm text-amber-700">
          {`上传文件中有 ${test.skipped} 行被跳过（问题为空等）。`}
          <Button
            type="link"
            size="small"
            className="px-0"
            loading={skipped.isPending}
            onClick={() => skipped.mutate(test.id)}
          >
            下载跳过的行
          </Button>
        </p>
      )}
      <div className="grid grid-cols-2 gap-4 md:grid-cols-4 xl:grid-cols-7">
        {BATCH_FIGURES.map((figure) => (
          <Statistic
            key={figure.key}
            title={figure.label}
            value={formatFigure(figure.kind, figure.value(test.metrics))}
          />
        ))}
      </div>

      <section aria-label="对比" className="flex flex-col gap-3">
        <div className="flex flex-wrap items-center gap-2">
          <span className="text-sm text-gray-700">对比</span>
          <Select
            aria-label="选择之前的一次测试"
            className="min-w-72"
            allowClear
            placeholder={earlier.length === 0 ? '没有可对比的更早测试' : '选择之前的一次测试'}
            disabled={earlier.length === 0 || test.status !== 'done'}
            value={compareWith}
            onChange={(value?: string) => setCompareWith(value)}
            options={earlier.map((run) => ({
              value: run.id,
              label: `${formatTime(run.createdAt)} · ${run.fileName}`,
            }))}
          />
        </div>
        {comparison.data && <Comparison comparison={comparison.data} />}
      </section>

      <section aria-label="逐题结果" className="flex flex-col gap-2">
        <div className="flex items-center gap-2">
          <span className="text-sm text-gray-700">逐题结果</span>
          <Select
            aria-label="按结果筛选"
            className="w-40"
            value={params.outcome ?? ''}
            options={OUTCOME_OPTIONS}
            onChange={(value: string) =>
              setParams((p) => ({
                ...p,
                page: 1,
                outcome: value === '' ? undefined : (value as KnowledgeBatchOutcome),
              }))
            }
          />
        </div>
        <Table<KnowledgeBatchItem>
          rowKey="position"
          size="small"
          loading={items.isLoading}
          dataSource={items.data?.items ?? []}
          columns={itemColumns}
          locale={{
            emptyText: (
              <Empty description={test.status === 'running' ? '测试进行中' : '没有符合条件的问题'} />
            ),
          }}
          pagination={serverPagination(items.data, (page, pageSize) =>
            setParams((p) => ({ ...p, page, pageSize })),
          )}
        />
      </section>
    </section>
  );
}
