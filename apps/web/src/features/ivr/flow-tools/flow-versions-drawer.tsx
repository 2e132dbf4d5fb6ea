import type { FlowDetail, FlowVersionSummary } from '@callpilot/contracts';
import { Button, Drawer, Empty, Popconfirm, Spin, Tag } from 'antd';
import dayjs from 'dayjs';
import { useMemo, useState } from 'react';
import { toast } from 'sonner';
import { useReviewFirst } from '@/entities/review/api/use-review-first';
import { useFlowVersion } from '@/features/ivr/api/get-flow-version';
import { useFlowStoredDraft, useFlowVersions } from '@/features/ivr/api/get-flow-versions';
import { useRollbackFlow } from '@/features/ivr/api/rollback-flow';
import { diffFlowGraphs } from './flow-diff';
import { FlowDiffView } from './flow-diff-view';

function VersionDiff({ projectId, flowId, version }: { projectId: string; flowId: string; version: number }) {
  const graph = useFlowVersion(projectId, flowId, version);
  const draft = useFlowStoredDraft(projectId, flowId);
  const diff = useMemo(
    () => (graph.data && draft.data ? diffFlowGraphs(graph.data, draft.data) : null),
    [graph.data, draft.data],
  );
  if (graph.isError || draft.isError) return <p className="m-0 text-sm text-red-500">版本内容加载失败</p>;
  if (!diff) return <Spin size="small" />;
  return (
    <section aria-label={`v${version} 与草稿的差异`} className="rounded bg-gray-50 p-3">
      <p className="m-0 mb-2 text-xs text-gray-500">从 v{version} 到已保存的草稿：</p>
      <FlowDiffView diff={diff} emptyText="与已保存的草稿相同" />
    </section>
  );
}

function VersionItem({
  projectId,
  flowId,
  version,
  viewing,
  onView,
  onRolledBack,
}: {
  projectId: string;
  flowId: string;
  version: FlowVersionSummary;
  viewing: boolean;
  onView: () => void;
  onRolledBack: (detail: FlowDetail) => void;
}) {
  const rollback = useRollbackFlow(projectId, flowId);
  // A rollback publishes: a member waits for review instead.
  const reviewFirst = useReviewFirst(projectId);
  const confirmRollback = async () => {
    const detail = await rollback.mutateAsync(version.version);
    toast.success(`已回滚到 v${version.version}`);
    onRolledBack(detail);
  };
  return (
    <li aria-label={`版本 v${version.version}`} className="flex flex-col gap-2 border-b border-gray-100 py-3">
      <div className="flex items-center gap-2">
        <span className="font-semibold">v{version.version}</span>
        {version.live && <Tag color="green">当前线上</Tag>}
        <span className="ml-auto text-xs text-gray-400">
          {version.submittedByName
            ? `${version.submittedByName} 提交 · ${version.publishedByName ?? '未知用户'} 批准`
            : (version.publishedByName ?? '未知用户')}{' '}
          · {dayjs(version.publishedAt).format('YYYY-MM-DD HH:mm')}
        </span>
      </div>
      <p className="m-0 text-sm text-gray-600">{version.note || '（无发布说明）'}</p>
      <div className="flex gap-2">
        <Button size="small" onClick={onView}>
          {viewing ? '收起' : '查看'}
        </Button>
        {!reviewFirst && (
          <Popconfirm
            title={`回滚到 v${version.version}？`}
            description={`v${version.version} 将立即接听新来电，当前草稿会被它替换（未发布的修改将丢失）。`}
            okText="回滚"
            cancelText="取消"
            onConfirm={() => confirmRollback().catch(() => undefined)}
          >
            <Button size="small" loading={rollback.isPending}>
              回滚到此版本
            </Button>
          </Popconfirm>
        )}
      </div>
      {viewing && <VersionDiff projectId={projectId} flowId={flowId} version={version.version} />}
    </li>
  );
}

/**
 * 版本记录: every published version with its note, publisher and time, the live one tagged;
 * 查看 compares a version with the stored draft, 回滚 makes it live again (and the draft with it).
 */
export function FlowVersionsDrawer({
  open,
  projectId,
  flowId,
  onClose,
  onRolledBack,
}: {
  open: boolean;
  projectId: string;
  flowId: string;
  onClose: () => void;
  onRolledBack: (detail: FlowDetail) => void;
}) {
  const versions = useFlowVersions(projectId, flowId, { enabled: open });
  const [viewing, setViewing] = useState<number | null>(null);
  return (
    <Drawer title="版本记录" open={open} onClose={onClose} size={480} destroyOnHidden>
      {versions.isPending ? (
        <Spin />
      ) : versions.isError ? (
        <p className="text-sm text-red-500">版本记录加载失败</p>
      ) : versions.data.length === 0 ? (
        <Empty description="还没有发布过版本，发布后可在这里查看和回滚" />
      ) : (
        <ol aria-label="版本列表" className="m-0 list-none p-0">
          {versions.data.map((version) => (
            <VersionItem
              key={version.version}
              projectId={projectId}
              flowId={flowId}
              version={version}
              viewing={viewing === version.version}
              onView={() => setViewing((current) => (current === version.version ? null : version.version))}
              onRolledBack={onRolledBack}
            />
          ))}
        </ol>
      )}
    </Drawer>
  );
}
