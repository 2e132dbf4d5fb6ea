import ArrowLeftOutlined from '@ant-design/icons/ArrowLeftOutlined';
import DownOutlined from '@ant-design/icons/DownOutlined';
import type { KnowledgeTerm, KnowledgeTermImportResult } from '@callpilot/contracts';
import { Alert, Button, Collapse, Dropdown, Input, Upload } from 'antd';
import { useEffect, useState } from 'react';
import { Link } from 'react-router';
import { toast } from 'sonner';
import { saveBlob } from '@/lib/request';
import { selectCurrentProjectId, useUserStore } from '@/stores/user-store';
import { type KnowledgeTermExportFormat, useExportKnowledgeTerms } from '../api/export-knowledge-terms';
import { useKnowledgeTerms } from '../api/get-knowledge-terms';
import { useImportKnowledgeTerms } from '../api/import-knowledge-terms';
import { KnowledgeBuiltinTerms } from '../components/knowledge-builtin-terms';
import { KnowledgeTermFormDialog } from '../components/knowledge-term-form-dialog';
import { KnowledgeTermTable } from '../components/knowledge-term-table';
import { KNOWLEDGE_LIST_PATH } from '../utils/knowledge-paths';
import {
  rejectedTermsCsv,
  TERMS_ACCEPT,
  TERMS_REJECTS_FILE_NAME,
  TERMS_TEMPLATE_FILE_NAME,
  termsTemplateCsv,
} from '../utils/knowledge-term-files';

const DEFAULT_PAGE_SIZE = 20;

const EXPORT_FORMATS: { key: KnowledgeTermExportFormat; label: string }[] = [
  { key: 'csv', label: 'CSV (.csv)' },
  { key: 'xlsx', label: 'Excel (.xlsx)' },
];

function importSummary(result: KnowledgeTermImportResult): string {
  const parts = [`新增 ${result.created} 条`, `合并 ${result.merged} 条`];
  if (result.unchanged > 0) parts.push(`${result.unchanged} 行已存在`);
  if (result.rejected.length > 0) parts.push(`${result.rejected.length} 行未导入`);
  return `导入完成：${parts.join('，')}`;
}

/** 口语词典: the project's own colloquial → standard words, and the built-in ones beside them. */
export function KnowledgeTermsPage() {
  const projectId = useUserStore(selectCurrentProjectId) ?? '';
  const [query, setQuery] = useState({ page: 1, pageSize: DEFAULT_PAGE_SIZE, keyword: '' });
  const terms = useKnowledgeTerms(projectId, query);
  // One dialog at a time: adding (null term) or editing one entry.
  const [editing, setEditing] = useState<{ term?: KnowledgeTerm } | null>(null);
  const [imported, setImported] = useState<KnowledgeTermImportResult | null>(null);
  const importTerms = useImportKnowledgeTerms(projectId);
  const exportTerms = useExportKnowledgeTerms(projectId);

  // Deleting the last entry of a page leaves it empty; show the page before it instead.
  const lastPage = Math.max(1, Math.ceil((terms.data?.total ?? 0) / query.pageSize));
  const beyondEnd = terms.isSuccess && !terms.isPlaceholderData && query.page > lastPage;
  useEffect(() => {
    if (beyondEnd) setQuery((q) => ({ ...q, page: lastPage }));
  }, [beyondEnd, lastPage]);

  const sendFile = async (file: File) => {
    setImported(null);
    try {
      setImported(await importTerms.mutateAsync(file));
    } catch {
      // The request client has already said why.
    }
  };

  return (
    <main className="flex flex-col gap-6 p-6">
      <header className="flex flex-wrap items-start justify-between gap-4">
        <div>
          <Link to={KNOWLEDGE_LIST_PATH} className="text-sm text-gray-500">
            <ArrowLeftOutlined aria-hidden="true" /> 返回知识库
          </Link>
          <h1 className="mt-1 text-2xl font-semibold text-gray-900">口语词典</h1>
          <p className="mt-1 max-w-3xl text-sm text-gray-500">
            来电者常用口语或别称提问（如把“光猫”说成“猫”、把“余额”说成“话费”）。检索知识库之前，
            问题里的口语说法会先替换为标准词，助手因此能找到用标准词写成的答案。
            词典对本项目的所有知识库生效，并在内置词典之上补充本行业的说法。
          </p>
        </div>
        <div className="flex flex-wrap gap-2">
          <Upload
            accept={TERMS_ACCEPT}
            showUploadList={false}
            disabled={importTerms.isPending}
            beforeUpload={(file) => {
              void sendFile(file as File);
              // Sent by hand above; antd must neither post it nor keep it in its own list.
              return Upload.LIST_IGNORE;
            }}
          >
            <Button loading={importTerms.isPending}>导入</Button>
          </Upload>
          <Dropdown
            trigger={['click']}
            disabled={exportTerms.isPending}
            menu={{
              items: EXPORT_FORMATS,
              onClick: ({ key }) =>
                exportTerms.mutate(key as KnowledgeTermExportFormat, {
                  onSuccess: () => toast.success('导出完成'),
                }),
            }}
          >
            <Button loading={exportTerms.isPending}>
              导出
              <DownOutlined aria-hidden="true" />
            </Button>
          </Dropdown>
          <Button type="primary" onClick={() => setEditing({})}>
            添加词条
          </Button>
        </div>
      </header>

      <p className="flex flex-wrap items-center gap-1 text-xs text-gray-500">
        导入 csv 或 xlsx：第一行为表头“标准词”“口语说法”，多个口语说法用 | 、 , 或换行分隔。
        已有的标准词只会合并新的口语说法，不会被覆盖。
        <Button
          type="link"
          size="small"
          className="px-0"
          onClick={() => saveBlob(termsTemplateCsv(), TERMS_TEMPLATE_FILE_NAME)}
        >
          下载模板
        </Button>
      </p>

      {imported && (
        <Alert
          showIcon
          closable
          type={imported.rejected.length > 0 ? 'warning' : 'success'}
          title={importSummary(imported)}
          description={
            imported.rejected.length > 0 ? (
              <div className="flex flex-col gap-1">
                <ul className="m-0 list-none p-0 text-sm">
                  {imported.rejected.slice(0, 5).map((row) => (
                    <li key={row.row}>
                      第 {row.row} 行：{row.reason}
                    </li>
                  ))}
                </ul>
                <Button
                  size="small"
                  className="self-start"
                  onClick={() => saveBlob(rejectedTermsCsv(imported.rejected), TERMS_REJECTS_FILE_NAME)}
                >
                  下载未导入的行
                </Button>
              </div>
            ) : undefined
          }
          onClose={() => setImported(null)}
        />
      )}

      <section className="flex flex-col gap-4 rounded-lg border border-gray-200 bg-white p-6">
        <Input.Search
          className="max-w-xs"
          placeholder="搜索标准词或口语说法"
          aria-label="搜索词条"
          allowClear
          maxLength={20}
          onSearch={(value) => setQuery((q) => ({ ...q, keyword: value.trim(), page: 1 }))}
        />
        <KnowledgeTermTable
          projectId={projectId}
          data={terms.data ?? undefined}
          loading={terms.isPending && Boolean(projectId)}
          keyword={query.keyword}
          onAdd={() => setEditing({})}
          onEdit={(term) => setEditing({ term })}
          onPageChange={(page, pageSize) =>
            setQuery((q) => (pageSize !== q.pageSize ? { ...q, page: 1, pageSize } : { ...q, page }))
          }
        />
      </section>

      <Collapse
        items={[
          {
            key: 'builtin',
            label: '内置词典（只读，对所有项目生效）',
            children: <KnowledgeBuiltinTerms projectId={projectId} />,
          },
        ]}
      />

      {editing && (
        <KnowledgeTermFormDialog projectId={projectId} term={editing.term} onClose={() => setEditing(null)} />
      )}
    </main>
  );
}
