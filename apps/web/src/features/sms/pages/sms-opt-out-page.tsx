import type { SmsOptOut } from '@callpilot/contracts';
import { Alert, Button, Input, Popconfirm, Table } from 'antd';
import { useState } from 'react';
import { useSearchParams } from 'react-router';
import { selectCurrentProjectId, useUserStore } from '@/stores/user-store';
import { useSmsOptOuts } from '../api/get-sms-opt-outs';
import { useRemoveSmsOptOut } from '../api/remove-sms-opt-out';
import { SmsOptOutAddDialog } from '../components/sms-opt-out-dialogs';
import { formatSmsTime } from '../utils/sms-format';

const SOURCE_LABELS: Record<SmsOptOut['source'], string> = {
  reply: '回复退订',
  manual: '手动添加',
  api: '开放接口',
};
const PAGE_SIZE = 20;

/** 免打扰: numbers no SMS goes to (they replied T/TD/退订/R/N, or were added), searchable by phone. */
export function SmsOptOutPage() {
  const projectId = useUserStore(selectCurrentProjectId) ?? '';
  const [searchParams, setSearchParams] = useSearchParams();
  const page = Math.max(1, Number(searchParams.get('page')) || 1);
  const phone = searchParams.get('phone') ?? '';
  const params = { page, pageSize: PAGE_SIZE, ...(phone ? { phone } : {}) };
  const optOuts = useSmsOptOuts(projectId, params);
  const remove = useRemoveSmsOptOut(projectId);
  const [adding, setAdding] = useState(false);
  // Taking a number off the list is for owners and admins (the server refuses members too).
  const canRemove = useUserStore((state) => state.userInfo.isOwnerOrAdmin);

  const setQuery = (next: { page?: number; phone?: string }) => {
    const merged = { page, phone, ...next };
    const search = new URLSearchParams();
    if (merged.phone) search.set('phone', merged.phone);
    if (merged.page > 1) search.set('page', String(merged.page));
    setSearchParams(search, { replace: true });
  };

  return (
    <>
      <header className="flex flex-wrap items-center justify-between gap-4">
        <div>
          <h2 className="text-lg font-semibold text-gray-900">免打扰</h2>
          <p className="mt-1 max-w-3xl text-sm text-gray-500">
            回复 T、TD、退订、R 或 N
            的号码会自动加入免打扰名单，也可以手动添加。名单中的号码不会再收到本项目的短信；呼叫任务的免打扰名单同样生效。
          </p>
        </div>
        <Button type="primary" onClick={() => setAdding(true)}>
          添加号码
        </Button>
      </header>
      {optOuts.isError && (
        <Alert
          type="error"
          showIcon
          title="免打扰名单加载失败"
          action={
            <Button size="small" onClick={() => void optOuts.refetch()}>
              重试
            </Button>
          }
        />
      )}
      <section className="flex flex-col gap-4 rounded-lg border border-gray-200 bg-white p-6">
        <Input.Search
          className="max-w-xs"
          aria-label="按手机号搜索"
          placeholder="按手机号搜索"
          allowClear
          defaultValue={phone}
          maxLength={20}
          onSearch={(value) => setQuery({ phone: value.trim(), page: 1 })}
        />
        <Table<SmsOptOut>
          rowKey="phone"
          loading={optOuts.isPending}
          dataSource={optOuts.data?.items}
          locale={{ emptyText: phone ? '没有匹配的号码' : '免打扰名单为空' }}
          pagination={{
            current: page,
            pageSize: PAGE_SIZE,
            total: optOuts.data?.total ?? 0,
            showSizeChanger: false,
            onChange: (next) => setQuery({ page: next }),
          }}
          columns={[
            { title: '手机号', dataIndex: 'phone' },
            {
              title: '来源',
              dataIndex: 'source',
              render: (source: SmsOptOut['source']) => SOURCE_LABELS[source],
            },
            { title: '回复内容', dataIndex: 'reply', render: (reply: string) => reply || '-' },
            { title: '加入时间', dataIndex: 'createdAt', render: (at: string) => formatSmsTime(at) },
            ...(canRemove
              ? [
                  {
                    title: '操作',
                    render: (_: unknown, row: SmsOptOut) => (
                      <Popconfirm
                        title={`将 ${row.phone} 移出免打扰名单？`}
                        description="移出后该号码可以再次收到短信"
                        okText="移出"
                        cancelText="取消"
                        onConfirm={() => remove.mutateAsync(row.phone)}
                      >
                        <Button type="link" size="small" danger>
                          移出
                        </Button>
                      </Popconfirm>
                    ),
                  },
                ]
              : []),
          ]}
        />
      </section>
      <SmsOptOutAddDialog projectId={projectId} open={adding} onClose={() => setAdding(false)} />
    </>
  );
}
