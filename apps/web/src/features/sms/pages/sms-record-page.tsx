import type { SmsMessage } from '@callpilot/contracts';
import { Alert, Button } from 'antd';
import { useState } from 'react';
import { selectCurrentProjectId, useUserStore } from '@/stores/user-store';
import { useSmsMessages } from '../api/get-sms-messages';
import { useSmsTemplates } from '../api/get-sms-templates';
import { SmsMessageDrawer } from '../components/sms-message-drawer';
import { SmsRecordExportButton } from '../components/sms-record-export-button';
import { SmsRecordFilterBar } from '../components/sms-record-filter-bar';
import { SmsRecordTable } from '../components/sms-record-table';
import { SMS_RECORD_PAGE_SIZE, toSmsRecordQuery, useSmsRecordQuery } from '../utils/sms-record-query';

/** The templates a project has (a select of them), as many as the review list gives in one page. */
const TEMPLATE_OPTIONS_QUERY = { page: 1, pageSize: 100 };

export function SmsRecordPage() {
  const projectId = useUserStore(selectCurrentProjectId);
  const { filters, page, setFilters, setPage } = useSmsRecordQuery();
  const messages = useSmsMessages(projectId, {
    ...toSmsRecordQuery(filters),
    page,
    pageSize: SMS_RECORD_PAGE_SIZE,
  });
  const templates = useSmsTemplates(projectId, TEMPLATE_OPTIONS_QUERY);
  const [open, setOpen] = useState<SmsMessage | null>(null);

  return (
    <>
      <header className="flex flex-wrap items-center justify-between gap-4">
        <div>
          <h2 className="text-lg font-semibold text-gray-900">发送记录</h2>
          <p className="mt-1 max-w-3xl text-sm text-gray-500">
            每条短信的发送结果与运营商回执，点击时间查看全文和状态时间线。计费条数按运营商规则计算（70
            字一条，长短信每 67 字一条）。
          </p>
        </div>
        <SmsRecordExportButton projectId={projectId ?? ''} filters={filters} />
      </header>
      {messages.isError && (
        <Alert
          type="error"
          showIcon
          title="发送记录加载失败"
          action={
            <Button size="small" onClick={() => void messages.refetch()}>
              重试
            </Button>
          }
        />
      )}
      <section className="flex flex-col gap-4 rounded-lg border border-gray-200 bg-white p-6">
        <SmsRecordFilterBar
          filters={filters}
          templateOptions={(templates.data?.items ?? []).map((t) => ({ value: t.id, label: t.name }))}
          templatesLoading={templates.isPending && Boolean(projectId)}
          onSearch={setFilters}
        />
        <SmsRecordTable
          data={messages.data}
          loading={messages.isPending && Boolean(projectId)}
          page={page}
          pageSize={SMS_RECORD_PAGE_SIZE}
          filtered={Object.keys(filters).length > 0}
          onPageChange={setPage}
          onOpen={setOpen}
        />
      </section>
      {open && <SmsMessageDrawer projectId={projectId ?? ''} message={open} onClose={() => setOpen(null)} />}
    </>
  );
}
