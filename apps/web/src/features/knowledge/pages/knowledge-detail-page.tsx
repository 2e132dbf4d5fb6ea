import ArrowLeftOutlined from '@ant-design/icons/ArrowLeftOutlined';
import { Button, Result, Skeleton, Tabs } from 'antd';
import { Link, useParams, useSearchParams } from 'react-router';
import { RequestError } from '@/lib/request';
import { selectCurrentProjectId, useUserStore } from '@/stores/user-store';
import { useKnowledgeBase } from '../api/get-knowledge-base';
import { KnowledgeBatchTestPanel } from '../components/knowledge-batch-test';
import { KnowledgeCalibrationStatus } from '../components/knowledge-calibration-status';
import { useKnowledgeDialogs } from '../components/knowledge-dialogs';
import { KnowledgeDocumentPanel } from '../components/knowledge-document-panel';
import { KnowledgeExportButton } from '../components/knowledge-export-button';
import { KnowledgeHitTest } from '../components/knowledge-hit-test';
import { KnowledgeSegmentList } from '../components/knowledge-segment-list';
import { KNOWLEDGE_LIST_PATH } from '../utils/knowledge-paths';

const TAB_KEYS = ['documents', 'segments', 'hit-test', 'batch-test'] as const;
type TabKey = (typeof TAB_KEYS)[number];
const isTabKey = (value: string | null): value is TabKey => TAB_KEYS.includes(value as TabKey);

const BACK_LINK = (
  <Link to={KNOWLEDGE_LIST_PATH} className="inline-flex items-center gap-1 text-sm text-gray-500">
    <ArrowLeftOutlined aria-hidden="true" />
    返回知识库列表
  </Link>
);

export function KnowledgeDetailPage() {
  const { knowledgeBaseId = '' } = useParams();
  const projectId = useUserStore(selectCurrentProjectId) ?? '';
  const [searchParams, setSearchParams] = useSearchParams();
  const tab = searchParams.get('tab');
  const activeTab: TabKey = isTabKey(tab) ? tab : 'documents';
  const base = useKnowledgeBase(projectId, knowledgeBaseId);
  const dialogs = useKnowledgeDialogs();

  if (base.isError) {
    const missing =
      base.error instanceof RequestError && (base.error.status === 404 || base.error.status === 403);
    return (
      <main className="flex flex-col gap-4 p-6">
        {BACK_LINK}
        <Result
          status={missing ? '404' : 'error'}
          title={missing ? '知识库不存在或已被删除' : '知识库加载失败'}
          subTitle={missing ? undefined : base.error.message}
          extra={
            missing ? undefined : (
              <Button type="primary" onClick={() => base.refetch()}>
                重试
              </Button>
            )
          }
        />
      </main>
    );
  }

  if (!base.data) {
    return (
      <main className="flex flex-col gap-4 p-6">
        {BACK_LINK}
        <Skeleton active />
      </main>
    );
  }

  const knowledgeBase = base.data;
  return (
    <main className="flex flex-col gap-6 p-6">
      <header className="flex flex-col gap-2">
        {BACK_LINK}
        <div className="flex flex-wrap items-start justify-between gap-4">
          <div className="min-w-0">
            <h1 className="text-2xl font-semibold break-all text-gray-900">{knowledgeBase.name}</h1>
            {knowledgeBase.description && (
              <p className="mt-1 text-sm text-gray-500">{knowledgeBase.description}</p>
            )}
            <p className="mt-1 text-xs text-gray-400">
              {`文档 ${knowledgeBase.documentCount} 个 · 分段 ${knowledgeBase.segmentCount} 个 · 分段长度 ${knowledgeBase.chunkSize} · 重叠 ${knowledgeBase.chunkOverlap}`}
            </p>
            <KnowledgeCalibrationStatus calibration={knowledgeBase.calibration} />
          </div>
          <div className="flex gap-2">
            <Button onClick={() => dialogs.open({ type: 'edit-base', base: knowledgeBase })}>编辑</Button>
            <KnowledgeExportButton
              projectId={projectId}
              knowledgeBaseId={knowledgeBase.id}
              baseName={knowledgeBase.name}
            />
          </div>
        </div>
      </header>
      <section className="rounded-lg border border-gray-200 bg-white px-6 pb-6">
        <Tabs
          activeKey={activeTab}
          // In the URL so a reload or a shared link opens the same tab.
          onChange={(key) => setSearchParams(key === 'documents' ? {} : { tab: key }, { replace: true })}
          destroyOnHidden
          items={[
            {
              key: 'documents',
              label: '文档',
              children: <KnowledgeDocumentPanel projectId={projectId} knowledgeBaseId={knowledgeBase.id} />,
            },
            {
              key: 'segments',
              label: '分段',
              children: <KnowledgeSegmentList projectId={projectId} knowledgeBaseId={knowledgeBase.id} />,
            },
            {
              key: 'hit-test',
              label: '命中测试',
              children: <KnowledgeHitTest projectId={projectId} knowledgeBaseId={knowledgeBase.id} />,
            },
            {
              key: 'batch-test',
              label: '批量测试',
              children: <KnowledgeBatchTestPanel projectId={projectId} knowledgeBaseId={knowledgeBase.id} />,
            },
          ]}
        />
      </section>
    </main>
  );
}
