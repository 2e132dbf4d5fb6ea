import { type Paged, SMS_TEMPLATE_TYPE_LABELS, type SmsTemplate } from '@callpilot/contracts';
import { Button, Empty, Popconfirm, Table, type TableColumnsType, Tag, Tooltip } from 'antd';
import { toast } from 'sonner';
import { serverPagination } from '@/components/server-pagination';
import { useDeleteSmsReviewItem } from '../api/delete-sms-review-item';
import { useSubmitSmsReview } from '../api/submit-sms-review';
import { useWithdrawSmsReview } from '../api/withdraw-sms-review';
import { formatSmsTime } from '../utils/sms-format';
import { canSubmit, canWithdraw, isEditable } from '../utils/sms-review-state';
import { SmsStatusTag } from './sms-status-tag';

type Props = {
  projectId: string;
  data: Paged<SmsTemplate> | undefined;
  loading: boolean;
  filtered: boolean;
  onCreate: () => void;
  onEdit: (template: SmsTemplate) => void;
  onPageChange: (page: number, pageSize: number) => void;
};

export function SmsTemplateTable({
  projectId,
  data,
  loading,
  filtered,
  onCreate,
  onEdit,
  onPageChange,
}: Props) {
  // The server's refusal ("模板未通过检查：…") toasts through the request client's policy.
  const submit = useSubmitSmsReview(projectId, 'templates');
  const withdraw = useWithdrawSmsReview(projectId, 'templates');
  const remove = useDeleteSmsReviewItem(projectId, 'templates');

  const columns: TableColumnsType<SmsTemplate> = [
    {
      title: '名称',
      dataIndex: 'name',
      width: 160,
      render: (name: string) => <span className="font-medium">{name}</span>,
    },
    {
      title: '类型',
      dataIndex: 'type',
      width: 80,
      render: (type: SmsTemplate['type']) => SMS_TEMPLATE_TYPE_LABELS[type],
    },
    {
      title: '内容',
      dataIndex: 'content',
      render: (content: string) => (
        <Tooltip title={<span className="whitespace-pre-wrap">{content}</span>}>
          <span className="line-clamp-2 max-w-md break-all">{content}</span>
        </Tooltip>
      ),
    },
    {
      title: '变量',
      dataIndex: 'variables',
      width: 160,
      render: (variables: string[]) =>
        variables.length === 0 ? (
          <span className="text-gray-400">无</span>
        ) : (
          <span className="flex flex-wrap gap-1">
            {variables.map((name) => (
              <Tag key={name} className="font-mono">{`\${${name}}`}</Tag>
            ))}
          </span>
        ),
    },
    {
      title: '状态',
      dataIndex: 'status',
      width: 90,
      render: (status: SmsTemplate['status']) => <SmsStatusTag status={status} />,
    },
    {
      title: '未通过原因',
      dataIndex: 'rejectReason',
      ellipsis: true,
      render: (reason: string | null) => reason ?? <span className="text-gray-400">-</span>,
    },
    { title: '提交时间', dataIndex: 'submittedAt', width: 150, render: formatSmsTime },
    {
      title: '操作',
      key: 'actions',
      width: 200,
      render: (_, template) => (
        <span className="flex flex-wrap gap-1">
          {isEditable(template.status) && (
            <Button type="link" size="small" onClick={() => onEdit(template)}>
              编辑
            </Button>
          )}
          {canSubmit(template.status) && (
            <Button
              type="link"
              size="small"
              disabled={submit.isPending}
              onClick={() => submit.mutate(template.id, { onSuccess: () => toast.success('模板已提交审核') })}
            >
              提交审核
            </Button>
          )}
          {canWithdraw(template.status) && (
            <Popconfirm
              title={`撤回模板「${template.name}」的审核？`}
              description="撤回后可以修改，再重新提交。"
              okText="撤回"
              cancelText="取消"
              onConfirm={() => withdraw.mutateAsync(template.id).then(() => toast.success('模板已撤回'))}
            >
              <Button type="link" size="small">
                撤回
              </Button>
            </Popconfirm>
          )}
          <Popconfirm
            title={`删除模板「${template.name}」？`}
            description={
              template.status === 'approved' ? '已通过的模板删除后需重新申请。' : '删除后不可恢复。'
            }
            okText="删除"
            okButtonProps={{ danger: true }}
            cancelText="取消"
            onConfirm={() => remove.mutateAsync(template.id).then(() => toast.success('模板已删除'))}
          >
            <Button type="link" size="small" danger>
              删除
            </Button>
          </Popconfirm>
        </span>
      ),
    },
  ];

  const empty = filtered ? (
    <Empty description="没有这个状态的模板" />
  ) : (
    <Empty description="还没有模板。短信内容须按审核通过的模板发送，先新建一个。">
      <Button type="primary" onClick={onCreate}>
        新建模板
      </Button>
    </Empty>
  );

  return (
    <Table<SmsTemplate>
      rowKey="id"
      columns={columns}
      dataSource={data?.items ?? []}
      loading={loading}
      locale={{ emptyText: loading ? ' ' : empty }}
      pagination={serverPagination(data, onPageChange)}
    />
  );
}
