import UploadOutlined from '@ant-design/icons/UploadOutlined';
import type { KnowledgeBatchTest } from '@callpilot/contracts';
import { KNOWLEDGE_BATCH_MAX_QUESTIONS, KNOWLEDGE_BATCH_TEST_STATUS_LABELS } from '@callpilot/contracts';
import {
  Button,
  Empty,
  InputNumber,
  Popconfirm,
  Progress,
  Table,
  type TableColumnsType,
  Tag,
  Upload,
} from 'antd';
import { useState } from 'react';
import { toast } from 'sonner';
import { serverPagination } from '@/components/server-pagination';
import { useCreateKnowledgeBatchTest } from '../api/create-knowledge-batch-test';
import { useDeleteKnowledgeBatchTest } from '../api/delete-knowledge-batch-test';
import { useDownloadBatchTemplate } from '../api/download-knowledge-batch-files';
import { useKnowledgeBatchTests } from '../api/get-knowledge-batch-tests';
import { BATCH_FIGURES, formatFigure } from '../utils/knowledge-batch-format';
import { formatTime } from '../utils/knowledge-format';
import { KnowledgeBatchTestDetail } from './knowledge-batch-test-detail';

type Props = { projectId: string; knowledgeBaseId: string };

const ACCEPT = '.csv,.xlsx';
const DEFAULT_THRESHOLD = 0.3;
/** The figures the list shows per run (the detail shows them all). */
const LIST_FIGURES = BATCH_FIGURES.filter((f) => f.key !== 'refused');

function RunStatus({ test }: { test: KnowledgeBatchTest }) {
  if (test.status === 'running') {
    return (
      <span className="flex w-32 items-center gap-2">
        <Progress percent={test.progress} size="small" aria-label={`测试进度 ${test.progress}%`} />
      </span>
    );
  }
  const tag = (
    <Tag color={test.status === 'done' ? 'success' : 'error'}>
      {KNOWLEDGE_BATCH_TEST_STATUS_LABELS[test.status]}
    </Tag>
  );
  return test.error ? (
    <span className="flex flex-col gap-1">
      {tag}
      <span className="text-xs text-red-600">{test.error}</span>
    </span>
  ) : (
    tag
  );
}

export function KnowledgeBatchTestPanel({ projectId, knowledgeBaseId }: Props) {
  const [pageState, setPageState] = useState({ page: 1, pageSize: 10 });
  const [threshold, setThreshold] = useState<number | null>(DEFAULT_THRESHOLD);
  const [selectedId, setSelectedId] = useState<string | undefined>();
  const runs = useKnowledgeBatchTests(projectId, knowledgeBaseId, pageState);
  const create = useCreateKnowledgeBatchTest(projectId, knowledgeBaseId);
  const remove = useDeleteKnowledgeBatchTest(projectId, knowledgeBaseId);
  const template = useDownloadBatchTemplate(projectId, knowledgeBaseId);

  const items = runs.data?.items ?? [];
  // The run chosen, else the newest: after an upload the new run is the one to watch.
  const selected = items.find((test) => test.id === selectedId) ?? items[0];

  const start = (file: File) => {
    create.mutate(
      { file, scoreThreshold: threshold ?? DEFAULT_THRESHOLD },
      {
        onSuccess: (test) => {
          setSelectedId(test.id);
          setPageState((s) => ({ ...s, page: 1 }));
          toast.success(
            test.skipped > 0 ? `已开始测试，跳过 ${test.skipped} 行（见测试详情）` : '已开始测试',
          );
        },
      },
    );
  };

  const templateButton = (
    <Button
      type="link"
      size="small"
      className="px-0"
      loading={template.isPending}
      onClick={() => template.mutate()}
    >
      下载模板
    </Button>
  );

  const columns: TableColumnsType<KnowledgeBatchTest> = [
    { title: '时间', dataIndex: 'createdAt', width: 150, render: (iso: string) => formatTime(iso) },
    { title: '文件', dataIndex: 'fileName', ellipsis: true },
    { title: '状态', key: 'status', width: 150, render: (_, test) => <RunStatus test={test} /> },
    ...LIST_FIGURES.map((figure) => ({
      title: figure.label,
      key: figure.key,
      width: 96,
      render: (_: unknown, test: KnowledgeBatchTest) => formatFigure(figure.kind, figure.value(test.metrics)),
    })),
    {
      title: '操作',
      key: 'actions',
      width: 120,
      render: (_, test) => (
        <span className="flex gap-1">
          <Button
            type="link"
            size="small"
            aria-label={`查看 ${formatTime(test.createdAt)} 的测试`}
            onClick={() => setSelectedId(test.id)}
          >
            查看
          </Button>
          <Popconfirm
            title="删除这次测试？"
            description="测试结果将无法恢复。"
            okText="删除"
            okButtonProps={{ danger: true }}
            cancelText="取消"
            onConfirm={() => remove.mutateAsync(test.id, { onSuccess: () => toast.success('测试已删除') })}
          >
            <Button type="link" size="small" danger>
              删除
            </Button>
          </Popconfirm>
        </span>
      ),
    },
  ];

  return (
    <div className="flex flex-col gap-6">
      <section aria-label="上传问题列表" className="flex flex-col gap-2">
        <p className="text-sm text-gray-500">
          上传一批客户可能会问的问题及期望答案，一次看清知识库答对多少、答错多少、该拒答时是否拒答；修改知识库后再测一次并与之前对比，发布前做回归测试。
        </p>
        <div className="flex flex-wrap items-center gap-3">
          <span className="flex items-center gap-2 text-sm text-gray-700">
            <label htmlFor="batch-test-threshold">置信度阈值</label>
            <InputNumber
              id="batch-test-threshold"
              min={0}
              max={1}
              step={0.05}
              precision={2}
              value={threshold}
              onChange={setThreshold}
            />
          </span>
          <Upload
            accept={ACCEPT}
            showUploadList={false}
            disabled={create.isPending}
            beforeUpload={(file) => {
              start(file as File);
              // Sent by hand above; antd must neither post it nor keep it in its own list.
              return Upload.LIST_IGNORE;
            }}
          >
            <Button type="primary" icon={<UploadOutlined aria-hidden="true" />} loading={create.isPending}>
              上传问题并测试
            </Button>
          </Upload>
          {templateButton}
        </div>
        <p className="text-xs text-gray-500">
          {`csv 或 xlsx，第一行为表头“问题”“期望答案”，每行一个问题，最多 ${KNOWLEDGE_BATCH_MAX_QUESTIONS} 个；期望答案留空表示该问题不应回答（应当拒答）。`}
        </p>
      </section>

      {runs.data && runs.data.total === 0 ? (
        <Empty
          description={
            <span className="text-sm text-gray-500">
              还没有批量测试。批量测试用一份问题列表检验知识库：期望答案排在第一且置信度达到阈值算回答正确，
              排在后面或答了别的算答错，不应回答的问题被拒答算正确拒答。
            </span>
          }
        >
          <Button onClick={() => template.mutate()} loading={template.isPending}>
            下载模板
          </Button>
        </Empty>
      ) : (
        <Table<KnowledgeBatchTest>
          rowKey="id"
          size="middle"
          loading={runs.isLoading}
          dataSource={items}
          columns={columns}
          scroll={{ x: 1100 }}
          rowClassName={(test) => (test.id === selected?.id ? 'bg-blue-50' : '')}
          pagination={serverPagination(runs.data, (page, pageSize) => setPageState({ page, pageSize }))}
        />
      )}

      {selected && (
        <KnowledgeBatchTestDetail
          key={selected.id}
          projectId={projectId}
          knowledgeBaseId={knowledgeBaseId}
          test={selected}
          earlier={items.filter((t) => t.status === 'done' && t.createdAt < selected.createdAt)}
        />
      )}
    </div>
  );
}
