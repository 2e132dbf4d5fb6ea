import { TRUNK_KIND_LABELS, type Trunk } from '@callpilot/contracts';
import { Button, Popconfirm, Switch, Table, type TableColumnsType, Tag } from 'antd';
import { toast } from 'sonner';
import { useDeleteTrunk } from '../api/delete-trunk';
import { useSetTrunkEnabled } from '../api/set-trunk-enabled';
import { useIvrDialogs } from './ivr-dialogs';
import { IvrTrunkStatus } from './ivr-trunk-status';

const linkButton = { type: 'link', size: 'small', className: '!px-0' } as const;

/** Where a trunk's calls go: the registrar of a register trunk, the signalling peer of an IP trunk. */
function Endpoint({ trunk }: { trunk: Trunk }) {
  if (trunk.kind === 'register') {
    return (
      <span className="flex flex-col">
        <span className="font-mono">{trunk.registrar}</span>
        <span className="text-xs text-gray-500">账号 {trunk.username}</span>
      </span>
    );
  }
  return (
    <span className="flex flex-col">
      <span className="font-mono">{trunk.signallingAddress}</span>
      <span className="text-xs text-gray-500" title={trunk.peerAddresses.join('\n')}>
        放行 {trunk.peerAddresses.length} 个对端地址
      </span>
    </span>
  );
}

export type TrunkPagination = { page: number; pageSize: number; total: number };

/** The project's trunks with their live status. Members see them; owners and admins manage them. */
export function IvrTrunkTable({
  projectId,
  trunks,
  loading,
  canManage,
  pagination,
  onPageChange,
}: {
  projectId: string;
  trunks: Trunk[];
  loading: boolean;
  canManage: boolean;
  pagination: TrunkPagination;
  onPageChange: (page: number, pageSize: number) => void;
}) {
  const dialogs = useIvrDialogs();
  const setEnabled = useSetTrunkEnabled(projectId);
  const remove = useDeleteTrunk(projectId);

  const columns: TableColumnsType<Trunk> = [
    { title: '线路名称', dataIndex: 'name' },
    { title: '类型', dataIndex: 'kind', render: (kind: Trunk['kind']) => TRUNK_KIND_LABELS[kind] },
    { title: '服务器 / 对端', key: 'endpoint', render: (_, trunk) => <Endpoint trunk={trunk} /> },
    { title: '状态', key: 'status', render: (_, trunk) => <IvrTrunkStatus status={trunk.status} /> },
    { title: '并发上限', dataIndex: 'maxConcurrent' },
    { title: '号码数', dataIndex: 'numberCount' },
    {
      title: '启用',
      dataIndex: 'enabled',
      render: (enabled: boolean, trunk) =>
        canManage ? (
          <Switch
            size="small"
            aria-label={`启用 ${trunk.name}`}
            checked={enabled}
            loading={setEnabled.isPending && setEnabled.variables?.trunkId === trunk.id}
            onChange={(checked) =>
              setEnabled.mutate(
                { trunkId: trunk.id, enabled: checked },
                {
                  onSuccess: () =>
                    toast.success(checked ? `已启用线路「${trunk.name}」` : `已停用线路「${trunk.name}」`),
                },
              )
            }
          />
        ) : (
          <Tag color={enabled ? 'success' : 'default'} className="!m-0">
            {enabled ? '启用' : '停用'}
          </Tag>
        ),
    },
    ...(canManage
      ? [
          {
            title: '操作',
            key: 'actions',
            fixed: 'right' as const,
            render: (_: unknown, trunk: Trunk) => (
              <span className="flex flex-wrap gap-x-3">
                <Button {...linkButton} onClick={() => dialogs.open({ type: 'edit-trunk', trunk })}>
                  编辑
                </Button>
                <Button {...linkButton} onClick={() => dialogs.open({ type: 'test-trunk', trunk })}>
                  测试呼叫
                </Button>
                <Popconfirm
                  title={`确定删除线路「${trunk.name}」？`}
                  description={
                    trunk.numberCount > 0
                      ? `仍有 ${trunk.numberCount} 个号码使用此线路，需先把它们改用其他线路。`
                      : '删除后不可恢复。'
                  }
                  okText="删除"
                  okButtonProps={{ danger: true }}
                  cancelText="取消"
                  onConfirm={() =>
                    remove
                      .mutateAsync(trunk.id)
                      .then(() => toast.success(`已删除线路「${trunk.name}」`))
                      // The request client has shown why (numbers still on it, for one).
                      .catch(() => undefined)
                  }
                >
                  <Button {...linkButton} danger>
                    删除
                  </Button>
                </Popconfirm>
              </span>
            ),
          },
        ]
      : []),
  ];

  return (
    <Table<Trunk>
      rowKey="id"
      size="middle"
      scroll={{ x: 'max-content' }}
      columns={columns}
      dataSource={trunks}
      loading={loading}
      pagination={{
        current: pagination.page,
        pageSize: pagination.pageSize,
        total: pagination.total,
        showSizeChanger: true,
        hideOnSinglePage: true,
        showTotal: (total) => `共 ${total} 条`,
        onChange: onPageChange,
      }}
      locale={{ emptyText: canManage ? '还没有线路，点击「添加线路」接入运营商或 PBX' : '还没有线路' }}
    />
  );
}
