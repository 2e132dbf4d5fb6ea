import { type FlowDetail, type FlowGraph, type FlowIssue, validateFlow } from '@callpilot/contracts';
import { Alert, Button, Input, Modal } from 'antd';
import { useMemo, useState } from 'react';
import { toast } from 'sonner';
import { useSubmitReview } from '@/entities/review/api/reviews';
import { useReviewFirst } from '@/entities/review/api/use-review-first';
import { usePublishFlow } from '@/features/ivr/api/publish-flow';
import { diffFlowGraphs } from './flow-diff';
import { FlowDiffView } from './flow-diff-view';

function IssueList({
  label,
  issues,
  onJump,
}: {
  label: string;
  issues: FlowIssue[];
  onJump: (nodeId: string) => void;
}) {
  return (
    <ul aria-label={label} className="m-0 mt-2 flex list-none flex-col gap-1 p-0">
      {issues.map((issue, index) => (
        // The same node may have the same message twice (two duplicate keys); position tells them apart.
        // biome-ignore lint/suspicious/noArrayIndexKey: issues are recomputed whole, never reordered
        <li key={index}>
          {issue.nodeId ? (
            <Button
              type="link"
              size="small"
              className="!h-auto !whitespace-normal !p-0 text-left"
              onClick={() => onJump(issue.nodeId as string)}
            >
              {issue.message}
            </Button>
          ) : (
            <span className="text-sm">{issue.message}</span>
          )}
        </li>
      ))}
    </ul>
  );
}

function PublishBody({
  projectId,
  flow,
  draft,
  onClose,
  onPublished,
  onJumpToNode,
}: {
  projectId: string;
  flow: FlowDetail;
  draft: FlowGraph;
  onClose: () => void;
  onPublished: (detail: FlowDetail) => void;
  onJumpToNode: (nodeId: string) => void;
}) {
  const [note, setNote] = useState('');
  const publish = usePublishFlow(projectId, flow.id);
  const reviewFirst = useReviewFirst(projectId);
  const submitReview = useSubmitReview(projectId);
  const issues = useMemo(() => validateFlow(draft, { flowId: flow.id }), [draft, flow.id]);
  const errors = issues.filter((issue) => issue.severity === 'error');
  const warnings = issues.filter((issue) => issue.severity === 'warning');
  const diff = useMemo(
    () => (flow.published ? diffFlowGraphs(flow.published, draft) : null),
    [flow.published, draft],
  );

  const jump = (nodeId: string) => {
    onJumpToNode(nodeId);
    onClose();
  };

  const submit = async () => {
    if (reviewFirst) {
      await submitReview.mutateAsync({ kind: 'flow', targetId: flow.id, note: note.trim() });
      toast.success('已提交审核，所有者或管理员批准后发布');
      onClose();
      return;
    }
    const detail = await publish.mutateAsync({ note: note.trim() });
    toast.success(`已发布 v${detail.publishedVersion ?? ''}，新来电将按此版本接听`);
    onPublished(detail);
    onClose();
  };

  return (
    <Modal
      open
      title={reviewFirst ? `提交审核「${flow.name}」` : `发布流程「${flow.name}」`}
      width={640}
      onCancel={onClose}
      footer={
        <div className="flex justify-end gap-2">
          <Button onClick={onClose}>取消</Button>
          <Button
            type="primary"
            disabled={errors.length > 0}
            loading={publish.isPending || submitReview.isPending}
            // The request client already shows the server's refusal; the dialog stays open to fix it.
            onClick={() => void submit().catch(() => undefined)}
          >
            {reviewFirst ? '提交审核' : '发布'}
          </Button>
        </div>
      }
    >
      <div className="flex max-h-[60vh] flex-col gap-4 overflow-y-auto">
        {errors.length > 0 ? (
          <Alert
            type="error"
            showIcon
            title={`有 ${errors.length} 个错误，修正后才能发布（点击跳转到节点）`}
            description={<IssueList label="错误" issues={errors} onJump={jump} />}
          />
        ) : (
          <Alert
            type="success"
            showIcon
            title={reviewFirst ? '检查通过：项目已开启发布审核，批准后发布' : '检查通过，可以发布'}
          />
        )}
        {warnings.length > 0 && (
          <Alert
            type="warning"
            showIcon
            title={`${warnings.length} 个提醒（不影响发布）`}
            description={<IssueList label="提醒" issues={warnings} onJump={jump} />}
          />
        )}
        <section aria-label="变更内容" className="flex flex-col gap-2">
          <h3 className="m-0 text-sm font-semibold">
            {diff ? `与线上版本 v${flow.publishedVersion ?? ''} 相比` : '首次发布'}
          </h3>
          {diff ? (
            <FlowDiffView diff={diff} emptyText="与线上版本相比没有变化" />
          ) : (
            <p className="m-0 text-sm text-gray-500">
              流程尚未发布过，将以 {draft.nodes.length} 个节点、{draft.edges.length} 条连线发布为 v1。
            </p>
          )}
        </section>
        <div className="flex flex-col gap-1 text-sm">
          <label htmlFor="flow-publish-note">发布说明（可选）</label>
          <Input.TextArea
            id="flow-publish-note"
            aria-label="发布说明"
            value={note}
            onChange={(event) => setNote(event.target.value)}
            maxLength={200}
            showCount
            rows={2}
            placeholder="例如：新增 2 号报修菜单"
          />
        </div>
        <p className="m-0 text-xs text-gray-400">发布后新来电按新版本接听，进行中的通话继续使用原版本。</p>
      </div>
    </Modal>
  );
}

/**
 * 发布: checks the draft as the server will (errors block, each a link to its node), shows what
 * changes against the live version, and publishes it with a note. The editor saves the draft first.
 */
export function FlowPublishDialog({
  open,
  ...props
}: {
  open: boolean;
  projectId: string;
  flow: FlowDetail;
  draft: FlowGraph;
  onClose: () => void;
  onPublished: (detail: FlowDetail) => void;
  onJumpToNode: (nodeId: string) => void;
}) {
  // Mounted only while open, so the note and the check start fresh each time.
  return open ? <PublishBody {...props} /> : null;
}
