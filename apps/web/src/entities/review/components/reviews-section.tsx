import {
  type PublishReviewSummary,
  REVIEW_KIND_LABELS,
  REVIEW_STATUS_LABELS,
  type ReviewStatus,
} from '@callpilot/contracts';
import { Alert, Button, Drawer, Input, Select, Skeleton, Space, Switch, Table, Tag } from 'antd';
import dayjs from 'dayjs';
import { useState } from 'react';
import { toast } from 'sonner';
import { useUserStore } from '@/stores/user-store';
import {
  useDecideReview,
  useReview,
  useReviewSettings,
  useReviews,
  useSetReviewSettings,
} from '../api/reviews';
import { ReviewChanges } from './review-changes';

const STATUS_COLORS: Record<ReviewStatus, string> = {
  pending: 'gold',
  approved: 'green',
  rejected: 'red',
  withdrawn: 'default',
};

function ReviewDrawer({
  projectId,
  reviewId,
  onClose,
}: {
  projectId: string;
  reviewId: string | null;
  onClose: () => void;
}) {
  const review = useReview(projectId, reviewId);
  const decide = useDecideReview(projectId);
  const manager = useUserStore((state) => state.userInfo.isOwnerOrAdmin);
  const me = useUserStore((state) => state.userInfo.id);
  const [comment, setComment] = useState('');
  const detail = review.data;

  const act = async (decision: 'approve' | 'reject' | 'withdraw') => {
    if (!detail) return;
    if (decision === 'reject' && !comment.trim()) {
      toast.error('请填写驳回原因');
      return;
    }
    const done = await decide.mutateAsync({ id: detail.id, decision, comment: comment.trim() });
    toast.success(
      decision === 'approve'
        ? `已批准并发布 v${done.publishedVersion ?? ''}`
        : decision === 'reject'
          ? '已驳回'
          : '已撤回',
    );
    setComment('');
    onClose();
  };

  return (
    <Drawer open={Boolean(reviewId)} size={760} title="审核详情" onClose={onClose} destroyOnHidden>
      {!detail ? (
        <Skeleton active />
      ) : (
        <div className="flex flex-col gap-4">
          <dl className="m-0 grid grid-cols-[6rem_1fr] gap-y-1 text-sm">
            <dt className="text-gray-500">对象</dt>
            <dd className="m-0">
              {REVIEW_KIND_LABELS[detail.kind]}「{detail.targetName}」
            </dd>
            <dt className="text-gray-500">提交人</dt>
            <dd className="m-0">
              {detail.submittedBy ?? '已删除的用户'} · {dayjs(detail.submittedAt).format('YYYY-MM-DD HH:mm')}
            </dd>
            <dt className="text-gray-500">提交说明</dt>
            <dd className="m-0">{detail.note || '—'}</dd>
            <dt className="text-gray-500">状态</dt>
            <dd className="m-0">
              <Tag color={STATUS_COLORS[detail.status]}>{REVIEW_STATUS_LABELS[detail.status]}</Tag>
              {detail.decidedBy &&
                `${detail.decidedBy} · ${dayjs(detail.decidedAt).format('YYYY-MM-DD HH:mm')}`}
              {detail.publishedVersion !== null && ` · 发布为 v${detail.publishedVersion}`}
            </dd>
            {detail.comment && (
              <>
                <dt className="text-gray-500">审核意见</dt>
                <dd className="m-0">{detail.comment}</dd>
              </>
            )}
          </dl>
          {detail.status === 'pending' &&
            detail.baseVersion !== null &&
            detail.liveVersion !== detail.baseVersion && (
              <Alert
                type="warning"
                showIcon
                title={`提交时的线上版本为 v${detail.baseVersion}，现已变为 v${detail.liveVersion ?? '—'}；下方差异按当前线上版本计算`}
              />
            )}
          <h3 className="m-0 text-sm font-semibold">
            {detail.liveVersion === null
              ? '首次发布：全部为新增内容'
              : `与线上版本 v${detail.liveVersion} 相比`}
          </h3>
          <ReviewChanges changes={detail.changes} />
          {detail.status === 'pending' && manager && (
            <div className="flex flex-col gap-2">
              <Input.TextArea
                aria-label="审核意见"
                rows={2}
                maxLength={500}
                showCount
                placeholder="审核意见（驳回时必填）"
                value={comment}
                onChange={(event) => setComment(event.target.value)}
              />
              <Space>
                <Button
                  type="primary"
                  loading={decide.isPending}
                  onClick={() => void act('approve').catch(() => undefined)}
                >
                  批准并发布
                </Button>
                <Button
                  danger
                  loading={decide.isPending}
                  onClick={() => void act('reject').catch(() => undefined)}
                >
                  驳回
                </Button>
              </Space>
            </div>
          )}
          {detail.status === 'pending' && !manager && detail.submittedById === me && (
            <Button onClick={() => void act('withdraw').catch(() => undefined)} loading={decide.isPending}>
              撤回提交
            </Button>
          )}
        </div>
      )}
    </Drawer>
  );
}

/**
 * 发布审核 on /account-info: the project's switch (owner/admin) and every submission, newest first,
 * each opening its diff against the live version.
 */
export function ReviewsSection({ projectId }: { projectId: string }) {
  const manager = useUserStore((state) => state.userInfo.isOwnerOrAdmin);
  const settings = useReviewSettings(projectId);
  const setSettings = useSetReviewSettings(projectId);
  const [status, setStatus] = useState<ReviewStatus | undefined>('pending');
  const [page, setPage] = useState(1);
  const [openId, setOpenId] = useState<string | null>(null);
  const reviews = useReviews(projectId, { page, pageSize: 20, status });

  return (
    <div className="flex flex-col gap-4">
      <div className="flex flex-wrap items-center gap-3">
        <Switch
          aria-label="开启发布审核"
          checked={Boolean(settings.data?.required)}
          disabled={!manager || settings.isPending}
          loading={setSettings.isPending}
          onChange={(required) =>
            void setSettings
              .mutateAsync({ required })
              .then(() => toast.success(required ? '已开启发布审核' : '已关闭发布审核'))
              .catch(() => undefined)
          }
        />
        <span className="text-sm">发布审核</span>
        <span className="text-xs text-gray-500">
          开启后，成员修改小助手或通话流程需「提交审核」，由所有者或管理员批准后才会发布上线。
          {!manager && '（仅所有者或管理员可以切换）'}
        </span>
      </div>
      <Select<ReviewStatus | 'all'>
        aria-label="审核状态"
        className="w-40"
        value={status ?? 'all'}
        onChange={(value) => {
          setStatus(value === 'all' ? undefined : value);
          setPage(1);
        }}
        options={[
          { value: 'all', label: '全部状态' },
          ...Object.entries(REVIEW_STATUS_LABELS).map(([value, label]) => ({
            value: value as ReviewStatus,
            label,
          })),
        ]}
      />
      <Table<PublishReviewSummary>
        rowKey="id"
        size="middle"
        loading={reviews.isPending}
        dataSource={reviews.data?.items ?? []}
        locale={{ emptyText: status === 'pending' ? '没有待审核的提交' : '暂无审核记录' }}
        pagination={{
          current: page,
          pageSize: 20,
          total: reviews.data?.total ?? 0,
          onChange: setPage,
          showTotal: (total) => `共 ${total} 条`,
        }}
        columns={[
          {
            title: '类型',
            dataIndex: 'kind',
            render: (kind: PublishReviewSummary['kind']) => REVIEW_KIND_LABELS[kind],
          },
          { title: '名称', dataIndex: 'targetName' },
          {
            title: '提交人',
            dataIndex: 'submittedBy',
            render: (name: string | null) => name ?? '已删除的用户',
          },
          {
            title: '提交时间',
            dataIndex: 'submittedAt',
            render: (at: string) => dayjs(at).format('YYYY-MM-DD HH:mm'),
          },
          {
            title: '状态',
            dataIndex: 'status',
            render: (value: ReviewStatus) => (
              <Tag color={STATUS_COLORS[value]}>{REVIEW_STATUS_LABELS[value]}</Tag>
            ),
          },
          { title: '审核人', dataIndex: 'decidedBy', render: (name: string | null) => name ?? '—' },
          {
            title: '操作',
            key: 'actions',
            render: (_, row) => (
              <Button type="link" size="small" onClick={() => setOpenId(row.id)}>
                {row.status === 'pending' && manager ? '审核' : '查看'}
              </Button>
            ),
          },
        ]}
      />
      <ReviewDrawer projectId={projectId} reviewId={openId} onClose={() => setOpenId(null)} />
    </div>
  );
}
