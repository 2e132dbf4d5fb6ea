import { Button, Input } from 'antd';
import { useEffect } from 'react';
import { useNavigate, useSearchParams } from 'react-router';
import { FeatureUnavailableAlert } from '@/components/feature-unavailable-alert';
import { useFeatureAvailable } from '@/hooks/use-feature-available';
import { useCanWrite } from '@/hooks/use-project-role';
import { selectCurrentProjectId, useUserStore } from '@/stores/user-store';
import { useKnowledgeBases } from '../api/get-knowledge-bases';
import { KnowledgeBaseTable } from '../components/knowledge-base-table';
import { useKnowledgeDialogs } from '../components/knowledge-dialogs';
import { KNOWLEDGE_TERMS_PATH } from '../utils/knowledge-paths';

const DEFAULT_PAGE_SIZE = 20;

const positiveInt = (value: string | null, fallback: number) => {
  const number = Number(value);
  return Number.isInteger(number) && number > 0 ? number : fallback;
};

export function KnowledgeListPage() {
  const projectId = useUserStore(selectCurrentProjectId);
  const canCreate = useFeatureAvailable('knowledge');
  const canWrite = useCanWrite();
  const dialogs = useKnowledgeDialogs();
  const navigate = useNavigate();
  // Page and keyword live in the URL, so coming back from a base's page returns to the same view.
  const [searchParams, setSearchParams] = useSearchParams();
  const page = positiveInt(searchParams.get('page'), 1);
  const pageSize = Math.min(100, positiveInt(searchParams.get('pageSize'), DEFAULT_PAGE_SIZE));
  const keyword = searchParams.get('keyword') ?? '';
  const bases = useKnowledgeBases(projectId, { page, pageSize, keyword });

  const setQuery = (next: { page?: number; pageSize?: number; keyword?: string }) => {
    const merged = { page, pageSize, keyword, ...next };
    const params = new URLSearchParams();
    if (merged.page > 1) params.set('page', String(merged.page));
    if (merged.pageSize !== DEFAULT_PAGE_SIZE) params.set('pageSize', String(merged.pageSize));
    if (merged.keyword) params.set('keyword', merged.keyword);
    setSearchParams(params, { replace: true });
  };

  // Deleting the last base of a page leaves it empty; show the page before it instead.
  const lastPage = Math.max(1, Math.ceil((bases.data?.total ?? 0) / pageSize));
  const beyondEnd = bases.isSuccess && !bases.isPlaceholderData && page > lastPage;
  // biome-ignore lint/correctness/useExhaustiveDependencies: setQuery is rebuilt each render
  useEffect(() => {
    if (beyondEnd) setQuery({ page: lastPage });
  }, [beyondEnd, lastPage]);

  return (
    <main className="flex flex-col gap-6 p-6">
      <header className="flex flex-wrap items-center justify-between gap-4">
        <div>
          <h1 className="text-2xl font-semibold text-gray-900">知识库</h1>
          <p className="mt-1 text-sm text-gray-500">上传产品资料和常见问答，助手在通话中据此回答客户。</p>
        </div>
        <div className="flex gap-2">
          <Button onClick={() => navigate(KNOWLEDGE_TERMS_PATH)}>口语词典</Button>
          {canWrite && (
            <Button
              type="primary"
              disabled={!canCreate}
              onClick={() => dialogs.open({ type: 'create-base' })}
            >
              新建知识库
            </Button>
          )}
        </div>
      </header>
      <FeatureUnavailableAlert feature="knowledge" />
      <section className="flex flex-col gap-4 rounded-lg border border-gray-200 bg-white p-6">
        <Input.Search
          key={keyword}
          className="max-w-xs"
          placeholder="按名称搜索"
          aria-label="搜索知识库"
          allowClear
          defaultValue={keyword}
          maxLength={50}
          onSearch={(value) => setQuery({ keyword: value.trim(), page: 1 })}
        />
        <KnowledgeBaseTable
          projectId={projectId ?? ''}
          data={bases.data ?? undefined}
          loading={bases.isPending && Boolean(projectId)}
          keyword={keyword}
          canCreate={canCreate && canWrite}
          onPageChange={(nextPage, nextPageSize) =>
            setQuery(nextPageSize !== pageSize ? { page: 1, pageSize: nextPageSize } : { page: nextPage })
          }
        />
      </section>
    </main>
  );
}
