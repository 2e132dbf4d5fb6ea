import {
  API_KEY_RESOURCE_LABELS,
  API_KEY_STATUS_LABELS,
  type ApiKey,
  type ApiKeyScopes,
  apiKeyResource,
} from '@callpilot/contracts';
import { Button, Popconfirm, Popover, Table, type TableColumnsType, Tag } from 'antd';
import type { ReactNode } from 'react';
import { toast } from 'sonner';
import { useRevokeApiKey } from '../api/revoke-api-key';
import {
  ACCESS_LABELS,
  formatShortTime,
  formatTime,
  isUsable,
  STATUS_COLORS,
  scopeSummary,
} from '../utils/api-key-format';
import { useApiKeyDialogs } from './api-key-dialogs';
import { DeveloperManageGate } from './developer-manage-gate';

const linkButton = { type: 'link', size: 'small', className: '!px-0' } as const;

export const REVOKE_WARNING = '吊销后使用该密钥的请求会立即失败';

function ScopeMatrix({ scopes }: { scopes: ApiKeyScopes }) {
  return (
    <table className="text-sm">
      <tbody>
        {apiKeyResource.options.map((resource) => {
          const access = scopes[resource] ?? 'none';
          return (
            <tr key={resource}>
              <td className="py-0.5 pr-4 text-gray-600">{API_KEY_RESOURCE_LABELS[resource]}</td>
              <td className={access === 'none' ? 'text-gray-400' : 'font-medium text-gray-900'}>
                {ACCESS_LABELS[access]}
              </td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}

function StatusCell({ apiKey }: { apiKey: ApiKey }) {
  return (
    <span className="flex flex-col items-start gap-0.5">
      <Tag color={STATUS_COLORS[apiKey.status]} className="!m-0">
        {API_KEY_STATUS_LABELS[apiKey.status]}
      </Tag>
      {apiKey.status === 'rolling' && apiKey.expiresAt && (
        <span className="text-xs text-gray-500">至 {formatShortTime(apiKey.expiresAt)}</span>
      )}
      {apiKey.status === 'revoked' && apiKey.revokedAt && (
        <span className="text-xs text-gray-500">{formatShortTime(apiKey.revokedAt)}</span>
      )}
    </span>
  );
}

/** The project's keys. Members see them (masked, as everyone does after creation); owners and admins manage them. */
export function ApiKeyTable({
  projectId,
  apiKeys,
  loading,
  canManage,
  emptyText,
}: {
  projectId: string;
  apiKeys: ApiKey[];
  loading: boolean;
  canManage: boolean;
  emptyText: ReactNode;
}) {
  const dialogs = useApiKeyDialogs();
  const revoke = useRevokeApiKey(projectId);

  const manageButton = (label: string, onClick: () => void, danger = false) => (
    <DeveloperManageGate canManage={canManage}>
      <Button {...linkButton} danger={danger} disabled={!canManage} onClick={onClick}>
        {label}
      </Button>
    </DeveloperManageGate>
  );

  const columns: TableColumnsType<ApiKey> = [
    { title: '名称', dataIndex: 'name' },
    {
      title: '密钥',
      dataIndex: 'maskedKey',
      render: (masked: string) => <span className="whitespace-nowrap font-mono text-xs">{masked}</span>,
    },
    {
      title: '权限',
      dataIndex: 'scopes',
      render: (scopes: ApiKeyScopes) => (
        <Popover title="权限" content={<ScopeMatrix scopes={scopes} />}>
          <span className="cursor-help border-b border-dashed border-gray-300 text-sm">
            {scopeSummary(scopes)}
          </span>
        </Popover>
      ),
    },
    { title: '状态', key: 'status', render: (_, apiKey) => <StatusCell apiKey={apiKey} /> },
    {
      title: '过期时间',
      dataIndex: 'expiresAt',
      render: (expiresAt: string | null) => (expiresAt ? formatShortTime(expiresAt) : '永不过期'),
    },
    {
      title: '创建人 / 创建时间',
      key: 'created',
      render: (_, apiKey) => (
        <span className="flex flex-col">
          <span>{apiKey.createdBy?.name ?? '-'}</span>
          <span className="text-xs text-gray-500">{formatShortTime(apiKey.createdAt)}</span>
        </span>
      ),
    },
    {
      title: '最近使用',
      key: 'lastUsed',
      render: (_, apiKey) =>
        apiKey.lastUsedAt ? (
          <span className="flex flex-col">
            <span>{formatTime(apiKey.lastUsedAt)}</span>
            <span className="font-mono text-xs text-gray-500">{apiKey.lastUsedIp ?? '-'}</span>
          </span>
        ) : (
          <span className="text-gray-400">从未使用</span>
        ),
    },
    {
      title: '操作',
      key: 'actions',
      fixed: 'right',
      render: (_, apiKey) => (
        <span className="flex flex-wrap gap-x-3">
          <Button {...linkButton} onClick={() => dialogs.open({ type: 'requests', apiKey })}>
            请求日志
          </Button>
          {apiKey.status === 'active' && manageButton('编辑', () => dialogs.open({ type: 'edit', apiKey }))}
          {apiKey.status === 'active' && manageButton('轮换', () => dialogs.open({ type: 'roll', apiKey }))}
          {isUsable(apiKey) &&
            (canManage ? (
              <Popconfirm
                title={`吊销密钥「${apiKey.name}」？`}
                description={REVOKE_WARNING}
                okText="吊销"
                okButtonProps={{ danger: true }}
                cancelText="取消"
                onConfirm={() =>
                  revoke
                    .mutateAsync(apiKey.id)
                    .then(() => toast.success(`已吊销密钥「${apiKey.name}」`))
                    // The request client has shown why.
                    .catch(() => undefined)
                }
              >
                <Button {...linkButton} danger>
                  吊销
                </Button>
              </Popconfirm>
            ) : (
              manageButton('吊销', () => undefined, true)
            ))}
        </span>
      ),
    },
  ];

  return (
    <Table<ApiKey>
      rowKey="id"
      size="middle"
      scroll={{ x: 'max-content' }}
      columns={columns}
      dataSource={apiKeys}
      loading={loading}
      locale={{ emptyText }}
      pagination={apiKeys.length > 20 ? { pageSize: 20, showSizeChanger: false } : false}
    />
  );
}
