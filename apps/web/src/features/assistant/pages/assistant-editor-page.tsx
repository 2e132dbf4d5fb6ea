import type { AssistantDetail } from '@callpilot/contracts';
import { Button, Empty, Form, Result, Skeleton, Space, Tag, Tooltip } from 'antd';
import { useEffect, useRef, useState } from 'react';
import { useNavigate, useSearchParams } from 'react-router';
import { toast } from 'sonner';
import { FeatureUnavailableAlert } from '@/components/feature-unavailable-alert';
import { usePendingReview, useSubmitReview } from '@/entities/review/api/reviews';
import { useReviewFirst } from '@/entities/review/api/use-review-first';
import { SmsFollowUpCard } from '@/entities/sms-follow-up/components/sms-follow-up-card';
import { useFeatureAvailable } from '@/hooks/use-feature-available';
import { useUnsavedChangesGuard } from '@/hooks/use-unsaved-changes-guard';
import { selectCurrentProjectId, useUserStore } from '@/stores/user-store';
import { useCopyAssistant } from '../api/copy-assistant';
import { useCreateAssistant } from '../api/create-assistant';
import { useAssistant } from '../api/get-assistant';
import { useLlmProviders } from '../api/get-llm-providers';
import { usePublishAssistant } from '../api/publish-assistant';
import { useRollbackAssistantVersion } from '../api/rollback-assistant-version';
import { useUpdateAssistant } from '../api/update-assistant';
import { type AssistantEditorDialog, AssistantEditorDialogs } from '../components/assistant-dialogs';
import { AssistantEditorForm } from '../components/assistant-editor-form';
import { AssistantInboundTestCall } from '../components/assistant-inbound-test-call';
import { AssistantTestCall } from '../components/assistant-test-call';
import { AssistantTestChat } from '../components/assistant-test-chat';
import { type AssistantFormValues, emptyAssistantForm, toFormValues } from '../utils/assistant-format';

export type EditType = 'create' | 'edit' | 'copy';

const editUrl = (id: string) => `/assistant/edit?id=${encodeURIComponent(id)}`;

/** /assistant/copy?id=: copies on the server once, then continues as the copy's editor. */
function AssistantCopyStep({ sourceId }: { sourceId: string }) {
  const projectId = useUserStore(selectCurrentProjectId) ?? '';
  const navigate = useNavigate();
  const copy = useCopyAssistant(projectId);
  const started = useRef(false);

  useEffect(() => {
    if (started.current || !projectId) return;
    started.current = true;
    copy.mutate(sourceId, {
      onSuccess: (created) => {
        toast.success(`已复制为「${created.name}」`);
        navigate(editUrl(created.id), { replace: true });
      },
    });
  }, [copy, navigate, projectId, sourceId]);

  if (copy.isError) {
    return (
      <Result
        status="error"
        title="复制失败"
        subTitle={copy.error.message}
        extra={<Button onClick={() => navigate('/assistant/list')}>返回列表</Button>}
      />
    );
  }
  return <Skeleton active className="p-6" />;
}

function AssistantEditor({ assistant }: { assistant: AssistantDetail | undefined }) {
  const projectId = useUserStore(selectCurrentProjectId) ?? '';
  const navigate = useNavigate();
  const available = useFeatureAvailable('assistant');
  const [form] = Form.useForm<AssistantFormValues>();
  const [dirty, setDirty] = useState(false);
  const [dialog, setDialog] = useState<AssistantEditorDialog>(null);
  const [chatOpen, setChatOpen] = useState(true);
  const [testCallOpen, setTestCallOpen] = useState(false);
  const [inboundCallOpen, setInboundCallOpen] = useState(false);
  const guard = useUnsavedChangesGuard(dirty);
  const create = useCreateAssistant(projectId);
  const update = useUpdateAssistant(projectId);
  const publish = usePublishAssistant(projectId);
  const reviewFirst = useReviewFirst(projectId);
  const submitReview = useSubmitReview(projectId);
  const pendingReview = usePendingReview(projectId, 'assistant', assistant?.id);
  const rollback = useRollbackAssistantVersion(projectId);
  const providers = useLlmProviders(projectId);

  const providerId = assistant?.config.brain.providerId;
  const provider = providers.data?.find((candidate) => candidate.id === providerId);
  const modelName = assistant?.config.brain.model || provider?.model;

  /** Validates and saves; resolves with the saved assistant, or undefined when nothing was saved. */
  const save = async (): Promise<AssistantDetail | undefined> => {
    let values: AssistantFormValues;
    try {
      values = await form.validateFields();
    } catch {
      toast.error('请检查表单中标红的内容');
      return undefined;
    }
    // validateFields returns only registered fields; the untouched defaults come from the loaded draft.
    const body = { ...form.getFieldsValue(true), ...values } as AssistantFormValues;
    try {
      if (assistant) {
        const saved = await update.mutateAsync({ id: assistant.id, body });
        setDirty(false);
        toast.success('已保存');
        return saved;
      }
      const created = await create.mutateAsync(body);
      setDirty(false);
      guard.allowNextNavigation();
      toast.success('已创建');
      navigate(editUrl(created.id), { replace: true });
      return created;
    } catch {
      // The request client has already shown the server's message; the edits stay on screen.
      return undefined;
    }
  };

  const onPublish = async (note: string) => {
    if (!assistant) return;
    if (dirty && !(await save())) return;
    if (reviewFirst) {
      await submitReview.mutateAsync({ kind: 'assistant', targetId: assistant.id, note });
      toast.success('已提交审核，所有者或管理员批准后发布');
    } else {
      await publish.mutateAsync({ id: assistant.id, note });
      toast.success('已发布新版本');
    }
    setDialog(null);
  };

  const onRollback = async (version: number) => {
    if (!assistant) return;
    const restored = await rollback.mutateAsync({ id: assistant.id, version });
    form.setFieldsValue(toFormValues(restored));
    setDirty(false);
    toast.success(`已回滚到 v${version}`);
    setDialog(null);
  };

  const saving = create.isPending || update.isPending;

  return (
    <main className="flex min-h-full flex-col gap-4 p-6">
      <header className="flex flex-wrap items-center justify-between gap-3">
        <div className="flex items-center gap-3">
          <h1 className="text-2xl font-semibold text-gray-900">{assistant ? '编辑小助手' : '新建小助手'}</h1>
          {assistant &&
            (assistant.publishedVersion === null ? (
              <Tag>未发布</Tag>
            ) : (
              <Tag color="green">已发布 v{assistant.publishedVersion}</Tag>
            ))}
          {assistant?.publishedVersion !== null && assistant?.hasUnpublishedChanges && (
            <Tag color="orange">有未发布修改</Tag>
          )}
          {dirty && <Tag color="gold">未保存</Tag>}
          {pendingReview && <Tag color="purple">审核中</Tag>}
        </div>
        <Space wrap>
          <Button onClick={() => navigate('/assistant/list')}>返回列表</Button>
          {assistant && <Button onClick={() => setDialog('versions')}>版本记录</Button>}
          {assistant && (
            <Button onClick={() => setDialog('publish')}>{reviewFirst ? '提交审核' : '发布'}</Button>
          )}
          <Tooltip title={!assistant && !available ? '该功能未开通，请联系销售开通' : undefined}>
            <Button type="primary" loading={saving} disabled={!assistant && !available} onClick={save}>
              保存
            </Button>
          </Tooltip>
          <Button onClick={() => setChatOpen((open) => !open)} disabled={!assistant}>
            {chatOpen ? '收起测试' : '测试对话'}
          </Button>
          <Button onClick={() => setTestCallOpen(true)} disabled={!assistant}>
            模拟通话
          </Button>
          <Button onClick={() => setInboundCallOpen(true)} disabled={!assistant}>
            模拟来电
          </Button>
        </Space>
      </header>
      {!assistant && <FeatureUnavailableAlert feature="assistant" />}
      <div className="flex min-h-0 flex-1 gap-4">
        <div className="flex min-w-0 flex-1 flex-col gap-4">
          <Form<AssistantFormValues>
            form={form}
            layout="vertical"
            className="min-w-0 flex-1"
            initialValues={assistant ? toFormValues(assistant) : emptyAssistantForm()}
            onValuesChange={() => setDirty(true)}
            onFinish={save}
          >
            <AssistantEditorForm
              form={form}
              projectId={projectId}
              assistantId={assistant?.id}
              onEdited={() => setDirty(true)}
              onManageSpeechProviders={() => setDialog('speechProviders')}
            />
          </Form>
          {assistant && (
            <SmsFollowUpCard
              projectId={projectId}
              owner={{ ownerType: 'assistant', ownerId: assistant.id }}
              variableNames={assistant.config.variables.map((variable) => variable.name)}
            />
          )}
        </div>
        {chatOpen && (
          <aside className="sticky top-4 flex h-[calc(100vh-8rem)] w-[420px] shrink-0 flex-col rounded-lg border border-gray-200 bg-white p-4">
            {assistant ? (
              <AssistantTestChat
                // A saved change (new opening line, new knowledge) starts the conversation over.
                key={assistant.updatedAt}
                projectId={projectId}
                assistant={assistant}
                modelName={modelName}
                dirty={dirty}
              />
            ) : (
              <Empty description="保存后即可在这里测试对话" />
            )}
          </aside>
        )}
      </div>
      {guard.prompt}
      {assistant && (
        <AssistantTestCall
          key={assistant.updatedAt}
          open={testCallOpen}
          onClose={() => setTestCallOpen(false)}
          projectId={projectId}
          assistant={assistant}
          dirty={dirty}
        />
      )}
      {assistant && (
        <AssistantInboundTestCall
          open={inboundCallOpen}
          onClose={() => setInboundCallOpen(false)}
          projectId={projectId}
          assistant={assistant}
        />
      )}
      <AssistantEditorDialogs
        dialog={dialog}
        onClose={() => setDialog(null)}
        assistantId={assistant?.id}
        publishedVersion={assistant?.publishedVersion ?? null}
        dirty={dirty}
        publishing={publish.isPending || submitReview.isPending || update.isPending}
        reviewFirst={reviewFirst}
        rollingBack={rollback.isPending}
        onPublish={onPublish}
        onRollback={onRollback}
      />
    </main>
  );
}

export function AssistantEditorPage({ editType }: { editType: EditType }) {
  const projectId = useUserStore(selectCurrentProjectId);
  const [searchParams] = useSearchParams();
  const id = searchParams.get('id') ?? undefined;
  const detail = useAssistant(editType === 'edit' ? projectId : undefined, id);

  if (editType === 'create') return <AssistantEditor key="create" assistant={undefined} />;
  if (!id) {
    return <Result status="404" title="缺少小助手 ID" subTitle="请从小助手列表进入编辑。" />;
  }
  if (editType === 'copy') return <AssistantCopyStep key={id} sourceId={id} />;
  if (detail.isPending) return <Skeleton active className="p-6" />;
  if (!detail.data) {
    return <Result status="404" title="小助手不存在或无权访问" subTitle={detail.error?.message} />;
  }
  // Keyed by id: opening another assistant (or the one just created) seeds a fresh form.
  return <AssistantEditor key={detail.data.id} assistant={detail.data} />;
}
