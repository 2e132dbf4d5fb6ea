import { type FlowDetail, type FlowNodeStats, flowDraftRequest, flowNodeTitle } from '@callpilot/contracts';
import { useQueryClient } from '@tanstack/react-query';
import { ReactFlowProvider, useReactFlow } from '@xyflow/react';
import { Button, Result, Skeleton } from 'antd';
import { type ComponentProps, useLayoutEffect, useMemo, useState } from 'react';
import { Link, useParams } from 'react-router';
import { toast } from 'sonner';
import { paths } from '@/config/paths';
import { useAssistantOptions } from '@/entities/assistant/api/get-assistant-options';
import { useReviewFirst } from '@/entities/review/api/use-review-first';
import { useUnsavedChangesGuard } from '@/hooks/use-unsaved-changes-guard';
import { selectCurrentProjectId, useUserStore } from '@/stores/user-store';
import { flowKeys } from '../api/flow-keys';
import { useFlow } from '../api/get-flow';
import { useFlowAudio } from '../api/get-flow-audio';
import { useFlowOptions } from '../api/get-flow-options';
import { useSaveFlowDraft } from '../api/save-flow-draft';
import { FlowCanvas } from '../flow-editor/flow-canvas';
import { FlowIssuesPanel, useLiveIssues } from '../flow-editor/flow-issues-panel';
import { FlowPalette } from '../flow-editor/flow-palette';
import { FlowSidePanel } from '../flow-editor/flow-side-panel';
import { FlowToolbar } from '../flow-editor/flow-toolbar';
import { type FlowLookups, FlowLookupsContext } from '../flow-editor/node-meta';
import { selectDirty, useFlowEditorStore } from '../flow-editor/store';
import { useFocusNode } from '../flow-editor/use-canvas-actions';
import { useEditorShortcuts } from '../flow-editor/use-editor-shortcuts';
import { FlowPublishDialog } from '../flow-tools/flow-publish-dialog';
import { FlowSimulatorPanel } from '../flow-tools/flow-simulator-panel';
import { FlowStatsControl } from '../flow-tools/flow-stats-control';
import { FlowTestCallDialog } from '../flow-tools/flow-test-call-dialog';
import { FlowVersionsDrawer } from '../flow-tools/flow-versions-drawer';

type ToolDialog = 'publish' | 'versions' | 'testCall' | null;

// The tools that take the graph read it here, so an edit re-renders them and not the whole editor.

function SimulatorSlot(props: { projectId: string; flowId: string; open: boolean; onClose: () => void }) {
  const graph = useFlowEditorStore((s) => s.graph);
  return (
    <FlowSimulatorPanel
      {...props}
      graph={graph}
      onHighlight={(path, active) => useFlowEditorStore.getState().setHighlight(path, active)}
    />
  );
}

function PublishSlot(props: Omit<ComponentProps<typeof FlowPublishDialog>, 'draft'>) {
  const graph = useFlowEditorStore((s) => s.graph);
  return <FlowPublishDialog {...props} draft={graph} />;
}

/** Names of what nodes point at by id, for their one-line summaries on the canvas. */
function useLookups(projectId: string): FlowLookups {
  const assistants = useAssistantOptions(projectId);
  const flows = useFlowOptions(projectId);
  const audio = useFlowAudio(projectId);
  return useMemo(
    () => ({
      assistants: new Map((assistants.data ?? []).map((a) => [a.id, a.name])),
      flows: new Map((flows.data ?? []).map((f) => [f.id, f.name])),
      audio: new Map((audio.data ?? []).map((a) => [a.id, a.name])),
    }),
    [assistants.data, flows.data, audio.data],
  );
}

function FlowEditor({ projectId, flow }: { projectId: string; flow: FlowDetail }) {
  const queryClient = useQueryClient();
  const { fitView, getInternalNode } = useReactFlow();
  const focusNode = useFocusNode();
  const lookups = useLookups(projectId);
  const save = useSaveFlowDraft(projectId, flow.id);
  const reviewFirst = useReviewFirst(projectId);
  const dirty = useFlowEditorStore(selectDirty);
  const guard = useUnsavedChangesGuard(dirty);
  const [tool, setTool] = useState<ToolDialog>(null);
  const [simulating, setSimulating] = useState(false);
  const [loaded, setLoaded] = useState(false);

  // The canvas starts from the draft once per flow; later answers (a save's cache update) must
  // not replace what the owner is drawing.
  // biome-ignore lint/correctness/useExhaustiveDependencies: seeded once per flow id on purpose
  useLayoutEffect(() => {
    useFlowEditorStore.getState().load(flow.id, flow.draft, flow.name);
    setLoaded(true);
  }, [flow.id]);

  useLiveIssues();

  /** Saves the draft; false when it could not (a field the schema refuses, or the server said no). */
  const saveDraft = async (): Promise<boolean> => {
    const { graph: current, name } = useFlowEditorStore.getState();
    const checked = flowDraftRequest.safeParse({ name, graph: current });
    if (!checked.success) {
      const issue = checked.error.issues[0];
      const [area, list, index] = issue?.path ?? [];
      const node = area === 'graph' && list === 'nodes' ? current.nodes[Number(index)] : undefined;
      if (node) {
        focusNode(node.id);
        toast.error(`无法保存：「${flowNodeTitle(node)}」${issue?.message ?? '有设置不正确'}`);
      } else toast.error(`无法保存：${issue?.message ?? '流程数据不正确'}`);
      return false;
    }
    try {
      await save.mutateAsync({ name: name.trim(), graph: current });
    } catch {
      // The request client has told the user why.
      return false;
    }
    useFlowEditorStore.getState().markSaved(current, name);
    return true;
  };

  const saveWithNotice = async () => {
    if (await saveDraft()) toast.success('已保存');
  };

  /** Tools that act on the stored draft save the canvas first. */
  const openAfterSaving = async (dialog: Exclude<ToolDialog, null>) => {
    if (selectDirty(useFlowEditorStore.getState()) && !(await saveDraft())) return;
    setTool(dialog);
  };

  const autoLayout = async () => {
    await useFlowEditorStore.getState().autoLayout((node) => {
      const measured = getInternalNode(node.id)?.measured;
      return measured?.width && measured.height
        ? { width: measured.width, height: measured.height }
        : { width: 240, height: 120 };
    });
    // Fit once xyflow has the new positions.
    requestAnimationFrame(() => void fitView({ duration: 300, maxZoom: 1, padding: 0.15 }));
  };

  const replaceDetail = (detail: FlowDetail) =>
    queryClient.setQueryData(flowKeys.detail(projectId, flow.id), detail);

  useEditorShortcuts({
    save: () => void saveWithNotice(),
    undo: () => useFlowEditorStore.getState().undo(),
    redo: () => useFlowEditorStore.getState().redo(),
    copy: () => {
      const copied = useFlowEditorStore.getState().copySelection();
      if (copied > 0) toast.success(`已复制 ${copied} 个节点`);
    },
    paste: () => {
      const result = useFlowEditorStore.getState().paste();
      if (!result) toast.info('剪贴板中没有节点，先选中节点按 Ctrl+C 复制');
      else if (result.skippedStart && result.pasted === 0)
        toast.warning('「开始」节点不能粘贴：每个流程只有一个开始');
      else if (result.skippedStart)
        toast.warning(`已粘贴 ${result.pasted} 个节点；「开始」节点不能粘贴，已跳过`);
      else toast.success(`已粘贴 ${result.pasted} 个节点`);
    },
  });

  if (!loaded) return null;
  return (
    <FlowLookupsContext.Provider value={lookups}>
      <main className="flex h-full min-h-[560px] flex-col">
        <FlowToolbar
          flow={flow}
          saving={save.isPending}
          onSave={() => void saveWithNotice()}
          onAutoLayout={() => void autoLayout()}
          onPublish={() => void openAfterSaving('publish')}
          onSimulate={() => setSimulating((open) => !open)}
          simulating={simulating}
          onTestCall={() => void openAfterSaving('testCall')}
          onVersions={() => setTool('versions')}
          publishLabel={reviewFirst ? '提交审核' : '发布'}
          stats={
            <FlowStatsControl
              projectId={projectId}
              flowId={flow.id}
              enabled={flow.publishedVersion !== null}
              onStats={(stats: FlowNodeStats | null) => useFlowEditorStore.getState().setStats(stats)}
            />
          }
        />
        <div className="flex min-h-0 flex-1">
          <div className="w-56 shrink-0">
            <FlowPalette />
          </div>
          <div className="flex min-w-0 flex-1 flex-col">
            <div className="min-h-0 flex-1">
              <FlowCanvas />
            </div>
            <FlowIssuesPanel />
          </div>
          <div className="w-[360px] shrink-0">
            <FlowSidePanel />
          </div>
          <SimulatorSlot
            projectId={projectId}
            flowId={flow.id}
            open={simulating}
            onClose={() => {
              setSimulating(false);
              useFlowEditorStore.getState().setHighlight([], null);
            }}
          />
        </div>
      </main>
      <PublishSlot
        open={tool === 'publish'}
        projectId={projectId}
        flow={flow}
        onClose={() => setTool(null)}
        onPublished={(detail) => {
          replaceDetail(detail);
          setTool(null);
        }}
        onJumpToNode={(nodeId) => {
          setTool(null);
          focusNode(nodeId);
        }}
      />
      <FlowVersionsDrawer
        open={tool === 'versions'}
        projectId={projectId}
        flowId={flow.id}
        onClose={() => setTool(null)}
        onRolledBack={(detail) => {
          replaceDetail(detail);
          // The draft is now that version: start from it, as if the page had just opened.
          useFlowEditorStore.getState().load(detail.id, detail.draft, detail.name);
          setTool(null);
        }}
      />
      <FlowTestCallDialog
        open={tool === 'testCall'}
        projectId={projectId}
        flowId={flow.id}
        onClose={() => setTool(null)}
      />
      {guard.prompt}
    </FlowLookupsContext.Provider>
  );
}

/** /ivr/edit/:flowId: the visual editor of one call flow (通话流程). */
export function IvrFlowEditorPage() {
  const { flowId = '' } = useParams();
  const projectId = useUserStore(selectCurrentProjectId) ?? '';
  const flow = useFlow(projectId, flowId);
  if (flow.isError) {
    return (
      <Result
        status="warning"
        title="无法打开这个流程"
        subTitle={flow.error.message}
        extra={
          <Link to={paths.ivrFlows}>
            <Button>返回流程列表</Button>
          </Link>
        }
      />
    );
  }
  if (!flow.data) return <Skeleton active className="p-6" />;
  return (
    <ReactFlowProvider>
      <FlowEditor key={flow.data.id} projectId={projectId} flow={flow.data} />
    </ReactFlowProvider>
  );
}
