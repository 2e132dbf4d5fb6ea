import {
  ASSISTANT_USE_LABELS,
  type AssistantStatus,
  type AssistantSummary,
  type AssistantUse,
} from '@callpilot/contracts';
import {
  Button,
  Empty,
  Input,
  Popconfirm,
  Select,
  Space,
  Table,
  type TableColumnsType,
  Tag,
  Tooltip,
} from 'antd';
import dayjs from 'dayjs';
import { useState } from 'react';
import { Link, useNavigate } from 'react-router';
import { FeatureUnavailableAlert } from '@/components/feature-unavailable-alert';
import { paths } from '@/config/paths';
import { useFeatureAvailable } from '@/hooks/use-feature-available';
import { useCanWrite } from '@/hooks/use-project-role';
import { useBalanceLimit } from '@/lib/api/get-balance-limit';
import { selectCurrentProjectId, useUserStore } from '@/stores/user-store';
import { useDeleteAssistant } from '../api/delete-assistant';
import { useAssistants } from '../api/get-assistants';
import { AssistantDialogs, type AssistantListDialog } from '../components/assistant-dialogs';
import { ASSISTANT_STATUS_LABELS, BRAIN_MODE_LABELS } from '../utils/assistant-format';

export const ASSISTANT_PAGE_SIZE = 20;

type Filters = { keyword?: string; use?: AssistantUse; status?: AssistantStatus };

const useOptions = (Object.keys(ASSISTANT_USE_LABELS) as AssistantUse[]).map((value) => ({
  value,
  label: ASSISTANT_USE_LABELS[value],
}));
const statusOptions = (Object.keys(ASSISTANT_STATUS_LABELS) as AssistantStatus[]).map((value) => ({
  value,
  label: ASSISTANT_STATUS_LABELS[value],
}));

export function AssistantListPage() {
  const projectId = useUserStore(selectCurrentProjectId);
  const navigate = useNavigate();
  const available = useFeatureAvailable('assistant');
  const limits = useBalanceLimit(projectId).data;
  const [filters, setFilters] = useState<Filters>({});
  const [keywordInput, setKeywordInput] = useState('');
  const [page, setPage] = useState(1);
  const [dialog, setDialog] = useState<AssistantListDialog>(null);
  const list = useAssistants(projectId, { page, pageSize: ASSISTANT_PAGE_SIZE, ...filters });
  const remove = useDeleteAssistant(projectId ?? '');

  const total = list.data?.total ?? 0;
  const atLimit = Boolean(limits?.hasBalance && limits.assistantLimit > 0 && total >= limits.assistantLimit);
  const canCreate = available && !atLimit;
  const createBlockedReason = !available
    ? '该功能未开通，请联系销售开通'
    : atLimit
      ? `智能小助手数量已达上限（${limits?.assistantLimit} 个），请联系销售提升额度`
      : undefined;

  const changeFilters = (next: Filters) => {
    setFilters(next);
    setPage(1);
  };

  const canWrite = useCanWrite();
  const columns: TableColumnsType<AssistantSummary> = [
    {
      title: '名称',
      dataIndex: 'name',
      render: (_, assistant) => (
        <div className="flex flex-col">
          <Link to={`/assistant/edit?id=${encodeURIComponent(assistant.id)}`} className="font-medium">
            {assistant.name}
          </Link>
          {assistant.description && <span className="text-xs text-gray-500">{assistant.description}</span>}
        </div>
      ),
    },
    { title: '用途', dataIndex: 'use', width: 100, render: (use: AssistantUse) => ASSISTANT_USE_LABELS[use] },
    {
      title: '模式',
      dataIndex: 'brainMode',
      width: 130,
      render: (mode: AssistantSummary['brainMode']) => (
        <Tag color={mode === 'llm' ? 'blue' : 'default'}>{BRAIN_MODE_LABELS[mode]}</Tag>
      ),
    },
    {
      title: '状态',
      dataIndex: 'status',
      width: 80,
      render: (status: AssistantStatus) => ASSISTANT_STATUS_LABELS[status],
    },
    {
      title: '发布状态',
      width: 170,
      render: (_, assistant) => (
        <Space size={4}>
          {assistant.publishedVersion === null ? (
            <Tag>未发布</Tag>
          ) : (
            <Tag color="green">v{assistant.publishedVersion}</Tag>
          )}
          {assistant.publishedVersion !== null && assistant.hasUnpublishedChanges && (
            <Tag color="orange">有未发布修改</Tag>
          )}
        </Space>
      ),
    },
    {
      title: '更新时间',
      dataIndex: 'updatedAt',
      width: 160,
      render: (updatedAt: string) => dayjs(updatedAt).format('YYYY-MM-DD HH:mm'),
    },
    {
      title: '操作',
      width: 170,
      // Read-only members open an assistant from its name; the editor itself is not theirs to save.
      render: (_, assistant) =>
        canWrite ? (
          <Space size={0}>
            <Button
              type="link"
              size="small"
              onClick={() => navigate(`/assistant/edit?id=${encodeURIComponent(assistant.id)}`)}
            >
              编辑
            </Button>
            <Tooltip title={createBlockedReason}>
              <Button
                type="link"
                size="small"
                disabled={!canCreate}
                onClick={() => navigate(`/assistant/copy?id=${encodeURIComponent(assistant.id)}`)}
              >
                复制
              </Button>
            </Tooltip>
            <Popconfirm
              title={`删除「${assistant.name}」？`}
              description="删除后不可恢复，使用它的任务将无法再发起呼叫。"
              okText="删除"
              cancelText="取消"
              okButtonProps={{ danger: true }}
              // The request client has shown why a delete failed; the row simply stays.
              onConfirm={() => remove.mutateAsync(assistant.id).catch(() => undefined)}
            >
              <Button type="link" size="small" danger>
                删除
              </Button>
            </Popconfirm>
          </Space>
        ) : (
          '-'
        ),
    },
  ];

  const hasFilters = Boolean(filters.keyword || filters.use || filters.status);

  return (
    <main className="flex flex-col gap-4 p-6">
      <header className="flex flex-wrap items-center justify-between gap-3">
        <h1 className="text-2xl font-semibold text-gray-900">智能小助手</h1>
        <Space>
          <Button onClick={() => setDialog('providers')}>模型配置</Button>
          <Button onClick={() => navigate(paths.assistantSpeech)}>语音配置</Button>
          {canWrite && (
            <Tooltip title={createBlockedReason}>
              <Button disabled={!canCreate} onClick={() => navigate('/assistant/template')}>
                从模板创建
              </Button>
            </Tooltip>
          )}
          {canWrite && (
            <Tooltip title={createBlockedReason}>
              <Button type="primary" disabled={!canCreate} onClick={() => navigate('/assistant/create')}>
                新建小助手
              </Button>
            </Tooltip>
          )}
        </Space>
      </header>
      <FeatureUnavailableAlert feature="assistant" />
      <section className="flex flex-col gap-4 rounded-lg border border-gray-200 bg-white p-4">
        <div className="flex flex-wrap gap-3">
          <Input.Search
            aria-label="搜索小助手"
            placeholder="按名称或描述搜索"
            allowClear
            className="max-w-xs"
            value={keywordInput}
            onChange={(event) => setKeywordInput(event.target.value)}
            onSearch={(keyword) => changeFilters({ ...filters, keyword: keyword.trim() || undefined })}
          />
          <Select<AssistantUse>
            aria-label="用途"
            placeholder="全部用途"
            allowClear
            className="w-36"
            options={useOptions}
            value={filters.use}
            onChange={(use) => changeFilters({ ...filters, use })}
          />
          <Select<AssistantStatus>
            aria-label="状态"
            placeholder="全部状态"
            allowClear
            className="w-36"
            options={statusOptions}
            value={filters.status}
            onChange={(status) => changeFilters({ ...filters, status })}
          />
        </div>
        <Table<AssistantSummary>
          rowKey="id"
          size="middle"
          columns={columns}
          dataSource={list.data?.items ?? []}
          loading={list.isFetching}
          locale={{
            emptyText: hasFilters ? (
              <Empty description="没有符合条件的小助手" />
            ) : (
              <Empty description="还没有智能小助手">
                <Button type="primary" disabled={!canCreate} onClick={() => navigate('/assistant/template')}>
                  从模板创建第一个小助手
                </Button>
              </Empty>
            ),
          }}
          pagination={{
            current: page,
            pageSize: ASSISTANT_PAGE_SIZE,
            total,
            showSizeChanger: false,
            showTotal: (count) => `共 ${count} 条`,
            onChange: setPage,
          }}
        />
      </section>
      <AssistantDialogs dialog={dialog} onClose={() => setDialog(null)} />
    </main>
  );
}
