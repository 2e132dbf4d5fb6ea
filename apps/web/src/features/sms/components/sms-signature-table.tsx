import { type Paged, SMS_SIGNATURE_SOURCE_LABELS, type SmsSignature } from '@callpilot/contracts';
import { Button, Empty, Popconfirm, Table, type TableColumnsType, Tooltip } from 'antd';
import { toast } from 'sonner';
import { serverPagination } from '@/components/server-pagination';
import { useDeleteSmsReviewItem } from '../api/delete-sms-review-item';
import { useSubmitSmsReview } from '../api/submit-sms-review';
import { useWithdrawSmsReview } from '../api/withdraw-sms-review';
import { bracketed, formatSmsTime } from '../utils/sms-format';
import { canSubmit, canWithdraw, isEditable } from '../utils/sms-review-state';
import type { SmsSignatureDialog } from './sms-signature-dialogs';
import { SmsStatusTag } from './sms-status-tag';

type Props = {
  projectId: string;
  data: Paged<SmsSignature> | undefined;
  loading: boolean;
  filtered: boolean;
  onOpen: (dialog: SmsSignatureDialog) => void;
  onPageChange: (page: number, pageSize: number) => void;
};

export function SmsSignatureTable({ projectId, data, loading, filtered, onOpen, onPageChange }: Props) {
  const submit = useSubmitSmsReview(projectId, 'signatures');
  const withdraw = useWithdrawSmsReview(projectId, 'signatures');
  const remove = useDeleteSmsReviewItem(projectId, 'signatures');

  const columns: TableColumnsType<SmsSignature> = [
    {
      title: '签名',
      dataIndex: 'name',
      render: (name: string) => <span className="font-medium">{bracketed(name)}</span>,
    },
    {
      title: '来源',
      dataIndex: 'source',
      width: 100,
      render: (source: SmsSignature['source']) => SMS_SIGNATURE_SOURCE_LABELS[source],
    },
    {
      title: '资质证明',
      dataIndex: 'proofName',
      ellipsis: true,
      render: (proofName: string | null) => proofName ?? <span className="text-gray-400">未上传</span>,
    },
    {
      title: '状态',
      dataIndex: 'status',
      width: 100,
      render: (status: SmsSignature['status']) => <SmsStatusTag status={status} />,
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
      width: 260,
      render: (_, signature) => (
        <span className="flex flex-wrap gap-1">
          {isEditable(signature.status) && (
            <>
              <Button type="link" size="small" onClick={() => onOpen({ type: 'edit', signature })}>
                编辑
              </Button>
              <Button type="link" size="small" onClick={() => onOpen({ type: 'proof', signature })}>
                上传证明
              </Button>
            </>
          )}
          {canSubmit(signature.status) && (
            <Tooltip title={signature.proofName ? undefined : '请先上传资质证明'}>
              <Button
                type="link"
                size="small"
                disabled={!signature.proofName || submit.isPending}
                onClick={() =>
                  submit.mutate(signature.id, { onSuccess: () => toast.success('签名已提交审核') })
                }
              >
                提交审核
              </Button>
            </Tooltip>
          )}
          {canWithdraw(signature.status) && (
            <Popconfirm
              title={`撤回签名${bracketed(signature.name)}的审核？`}
              description="撤回后可以修改，再重新提交。"
              okText="撤回"
              cancelText="取消"
              onConfirm={() => withdraw.mutateAsync(signature.id).then(() => toast.success('签名已撤回'))}
            >
              <Button type="link" size="small">
                撤回
              </Button>
            </Popconfirm>
          )}
          <Popconfirm
            title={`删除签名${bracketed(signature.name)}？`}
            description={
              signature.status === 'approved'
                ? '已通过的签名删除后需重新申请，使用它的短信将无法发送。'
                : '删除后不可恢复。'
            }
            okText="删除"
            okButtonProps={{ danger: true }}
            cancelText="取消"
            onConfirm={() => remove.mutateAsync(signature.id).then(() => toast.success('签名已删除'))}
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
    <Empty description="没有这个状态的签名" />
  ) : (
    <Empty description="还没有签名。每条短信都以审核通过的签名开头，先新建一个。">
      <Button type="primary" onClick={() => onOpen({ type: 'create' })}>
        新建签名
      </Button>
    </Empty>
  );

  return (
    <Table<SmsSignature>
      rowKey="id"
      columns={columns}
      dataSource={data?.items ?? []}
      loading={loading}
      locale={{ emptyText: loading ? ' ' : empty }}
      pagination={serverPagination(data, onPageChange)}
    />
  );
}
