import type { ProjectNumber } from '@callpilot/contracts';
import { Button, Popconfirm, Switch, Table, type TableColumnsType, Tag, Tooltip } from 'antd';
import { Link } from 'react-router';
import { toast } from 'sonner';
import { ivrFlowEditPath } from '@/config/paths';
import { useRestProjectNumber } from '@/entities/project-number/api/rest-project-number';
import { chinaTime } from '@/lib/format';
import { useDeleteProjectNumber } from '../api/delete-project-number';
import { useSaveProjectNumber } from '../api/save-project-number';
import { useIvrDialogs } from './ivr-dialogs';

const linkButton = { type: 'link', size: 'small', className: '!px-0' } as const;

/** Something answers the number's calls: an assistant or a flow. */
const answered = (number: ProjectNumber) => Boolean(number.inboundAssistantId || number.inboundFlowId);

/** The project's numbers. Members see them (and may place a 模拟来电); owners and admins manage them. */
export function IvrNumberTable({
  projectId,
  numbers,
  loading,
  canManage,
}: {
  projectId: string;
  numbers: ProjectNumber[];
  loading: boolean;
  canManage: boolean;
}) {
  const dialogs = useIvrDialogs();
  const update = useSaveProjectNumber(projectId, { creating: false });
  const remove = useDeleteProjectNumber(projectId);
  const rest = useRestProjectNumber(projectId);

  const columns: TableColumnsType<ProjectNumber> = [
    {
      title: '号码',
      dataIndex: 'number',
      render: (value: string) => <span className="font-mono">{value}</span>,
    },
    { title: '备注', dataIndex: 'label', render: (value: string) => value || '-' },
    {
      title: '线路',
      key: 'trunk',
      render: (_, number) =>
        number.trunkName ?? <span className="text-gray-400">{number.trunkId ? '-' : '模拟线路'}</span>,
    },
    {
      title: '启用',
      dataIndex: 'enabled',
      render: (enabled: boolean, number) =>
        canManage ? (
          <Switch
            size="small"
            aria-label={`启用 ${number.number}`}
            checked={enabled}
            loading={update.isPending && update.variables?.number === number.number}
            onChange={(checked) =>
              update.mutate(
                { number: number.number, label: number.label, enabled: checked },
                {
                  onSuccess: () =>
                    toast.success(checked ? `已启用 ${number.number}` : `已停用 ${number.number}`),
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
    {
      title: '外呼状态',
      key: 'resting',
      render: (_, number) => {
        const busy = rest.isPending && rest.variables?.number === number.number;
        return (
          <span className="flex items-center gap-2">
            {number.restingSince ? (
              <Tooltip
                title={`自 ${chinaTime(number.restingSince).format('MM-DD HH:mm')} 起不用于呼出任务，仍接听呼入`}
              >
                <Tag color="warning" className="!m-0">
                  休息中
                </Tag>
              </Tooltip>
            ) : (
              <Tag color="default" className="!m-0">
                使用中
              </Tag>
            )}
            {canManage && (
              <Button
                {...linkButton}
                loading={busy}
                aria-label={`${number.restingSince ? '恢复' : '休息'} ${number.number}`}
                onClick={() => rest.mutate({ number: number.number, resting: !number.restingSince })}
              >
                {number.restingSince ? '恢复' : '休息'}
              </Button>
            )}
          </span>
        );
      },
    },
    {
      title: '呼入接听',
      key: 'inbound',
      render: (_, number) =>
        number.inboundFlowId ? (
          <span>
            流程：
            <Link to={ivrFlowEditPath(number.inboundFlowId)}>{number.inboundFlowName ?? '未命名流程'}</Link>
          </span>
        ) : number.inboundAssistantName ? (
          <span>{number.inboundAssistantName}</span>
        ) : (
          <span className="text-gray-400">未绑定</span>
        ),
    },
    {
      title: '操作',
      key: 'actions',
      fixed: 'right',
      render: (_, number) => (
        <span className="flex flex-wrap gap-x-3">
          {canManage && (
            <>
              <Button {...linkButton} onClick={() => dialogs.open({ type: 'edit-number', number })}>
                编辑
              </Button>
              <Button {...linkButton} onClick={() => dialogs.open({ type: 'inbound', number })}>
                呼入设置
              </Button>
            </>
          )}
          <Tooltip title={answered(number) ? undefined : '绑定小助手或通话流程后可模拟来电'}>
            <Button
              {...linkButton}
              disabled={!answered(number)}
              onClick={() => dialogs.open({ type: 'simulate-inbound', number })}
            >
              模拟来电
            </Button>
          </Tooltip>
          {canManage && (
            <Popconfirm
              title={`确定删除号码 ${number.number}？`}
              description="使用它的呼出任务将不能再用它外显；绑定的呼入也会解除。"
              okText="删除"
              okButtonProps={{ danger: true }}
              cancelText="取消"
              onConfirm={() =>
                remove
                  .mutateAsync(number.number)
                  .then(() => toast.success(`已删除号码 ${number.number}`))
                  // The request client has shown why (a running task still uses it, for one).
                  .catch(() => undefined)
              }
            >
              <Button {...linkButton} danger>
                删除
              </Button>
            </Popconfirm>
          )}
        </span>
      ),
    },
  ];

  return (
    <Table<ProjectNumber>
      rowKey="number"
      size="middle"
      scroll={{ x: 'max-content' }}
      columns={columns}
      dataSource={numbers}
      loading={loading}
      pagination={false}
      locale={{ emptyText: canManage ? '还没有号码，点击「添加号码」添加' : '还没有号码' }}
    />
  );
}
