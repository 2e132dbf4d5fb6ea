import type { SmsTemplate } from '@callpilot/contracts';
import { Alert, Button } from 'antd';
import { useState } from 'react';
import { useCanWrite } from '@/hooks/use-project-role';
import { selectCurrentProjectId, useUserStore } from '@/stores/user-store';
import { useSmsTemplates } from '../api/get-sms-templates';
import { SmsStatusFilter } from '../components/sms-status-filter';
import { SmsTemplateEditorDrawer } from '../components/sms-template-editor-drawer';
import { SmsTemplateTable } from '../components/sms-template-table';
import { useSmsListQuery } from '../utils/use-sms-list-query';

/** The editor open, and on what: a new template or an existing one. */
type Editing = { type: 'create' } | { type: 'edit'; template: SmsTemplate };

export function SmsTemplatePage() {
  const projectId = useUserStore(selectCurrentProjectId);
  const { params, setQuery } = useSmsListQuery();
  const templates = useSmsTemplates(projectId, params);
  const [editing, setEditing] = useState<Editing | null>(null);
  const canWrite = useCanWrite();

  return (
    <>
      <header className="flex flex-wrap items-center justify-between gap-4">
        <div>
          <h2 className="text-lg font-semibold text-gray-900">模板管理</h2>
          <p className="mt-1 max-w-3xl text-sm text-gray-500">
            短信只能按审核通过的模板发送，变量在发送时填入。编辑器会按运营商的审核规则逐条检查，推广短信须以“拒收请回复R”结尾。
            已通过的模板不能修改，如需变更请新建。
          </p>
        </div>
        {canWrite && (
          <Button type="primary" onClick={() => setEditing({ type: 'create' })}>
            新建模板
          </Button>
        )}
      </header>
      {templates.isError && (
        <Alert
          type="error"
          showIcon
          title="模板加载失败"
          action={
            <Button size="small" onClick={() => void templates.refetch()}>
              重试
            </Button>
          }
        />
      )}
      <section className="flex flex-col gap-4 rounded-lg border border-gray-200 bg-white p-6">
        <SmsStatusFilter value={params.status} onChange={(status) => setQuery({ status, page: 1 })} />
        <SmsTemplateTable
          projectId={projectId ?? ''}
          data={templates.data}
          loading={templates.isPending}
          filtered={Boolean(params.status)}
          onCreate={() => setEditing({ type: 'create' })}
          onEdit={(template) => setEditing({ type: 'edit', template })}
          onPageChange={(page, pageSize) =>
            setQuery(pageSize !== params.pageSize ? { page: 1, pageSize } : { page })
          }
        />
      </section>
      {editing && (
        <SmsTemplateEditorDrawer
          projectId={projectId ?? ''}
          template={editing.type === 'edit' ? editing.template : undefined}
          onClose={() => setEditing(null)}
        />
      )}
    </>
  );
}
