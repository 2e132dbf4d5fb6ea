import DownOutlined from '@ant-design/icons/DownOutlined';
import { Button, Dropdown } from 'antd';
import { toast } from 'sonner';
import { type KnowledgeExportFormat, useExportKnowledgeBase } from '../api/export-knowledge-base';

const FORMATS: { key: KnowledgeExportFormat; label: string }[] = [
  { key: 'md', label: 'Markdown (.md)' },
  { key: 'csv', label: 'CSV (.csv)' },
  { key: 'xlsx', label: 'Excel (.xlsx)' },
];

type Props = { projectId: string; knowledgeBaseId: string; baseName: string };

export function KnowledgeExportButton({ projectId, knowledgeBaseId, baseName }: Props) {
  const exportBase = useExportKnowledgeBase(projectId, knowledgeBaseId, baseName);
  return (
    <Dropdown
      trigger={['click']}
      disabled={exportBase.isPending}
      menu={{
        items: FORMATS,
        onClick: ({ key }) =>
          exportBase.mutate(key as KnowledgeExportFormat, { onSuccess: () => toast.success('导出完成') }),
      }}
    >
      <Button loading={exportBase.isPending}>
        导出
        <DownOutlined aria-hidden="true" />
      </Button>
    </Dropdown>
  );
}
