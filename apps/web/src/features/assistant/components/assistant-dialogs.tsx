import type { AssistantVersion } from '@callpilot/contracts';
import { Button, Drawer, Empty, Form, Input, Modal, Popconfirm, Skeleton, Tag } from 'antd';
import dayjs from 'dayjs';
import { selectCurrentProjectId, useUserStore } from '@/stores/user-store';
import { useAssistantVersions } from '../api/get-assistant-versions';
import { AssistantLlmProviderDrawer } from './assistant-llm-provider-drawer';
import { AssistantSpeechProviderDrawer } from './assistant-speech-provider-drawer';

// Each page tracks its one open dialog with one typed value; the dialogs themselves live here.

export type AssistantListDialog = 'providers' | null;
export type AssistantEditorDialog = 'publish' | 'versions' | 'speechProviders' | null;

export function AssistantDialogs({ dialog, onClose }: { dialog: AssistantListDialog; onClose: () => void }) {
  return <AssistantLlmProviderDrawer open={dialog === 'providers'} onClose={onClose} />;
}

function PublishModal({
  open,
  dirty,
  publishing,
  reviewFirst,
  onPublish,
  onClose,
}: {
  open: boolean;
  dirty: boolean;
  publishing: boolean;
  reviewFirst: boolean;
  onPublish: (note: string) => Promise<void>;
  onClose: () => void;
}) {
  const [form] = Form.useForm<{ note: string }>();
  const verb = reviewFirst ? '提交审核' : '发布';
  return (
    <Modal
      title={reviewFirst ? '提交审核' : '发布新版本'}
      open={open}
      okText={dirty ? `保存并${verb}` : verb}
      cancelText="取消"
      confirmLoading={publishing}
      destroyOnHidden
      onCancel={onClose}
      onOk={async () => {
        try {
          const { note } = await form.validateFields();
          await onPublish(note ?? '');
        } catch {
          // Invalid note or a refused publish: the form or the request client says why; stay open.
        }
      }}
    >
      <p className="mb-3 text-sm text-gray-500">
        {reviewFirst
          ? '项目已开启发布审核：将冻结当前配置提交给所有者或管理员，批准后发布为新版本。'
          : '发布后将冻结当前配置为一个版本，呼叫任务使用已发布的版本。'}
        {dirty && `当前有未保存的修改，将先保存再${verb}。`}
      </p>
      <Form form={form} layout="vertical" preserve={false}>
        <Form.Item
          label="版本说明"
          name="note"
          rules={[{ max: 200, message: '版本说明不能超过 200 个字符' }]}
        >
          <Input.TextArea rows={3} placeholder="如：补充了价格相关问答" />
        </Form.Item>
      </Form>
    </Modal>
  );
}

function VersionDrawer({
  open,
  assistantId,
  publishedVersion,
  canRollback,
  rollingBack,
  onRollback,
  onClose,
}: {
  open: boolean;
  assistantId: string;
  publishedVersion: number | null;
  /** A rollback publishes: not for a member while the project reviews first. */
  canRollback: boolean;
  rollingBack: boolean;
  onRollback: (version: number) => Promise<void>;
  onClose: () => void;
}) {
  const projectId = useUserStore(selectCurrentProjectId);
  const versions = useAssistantVersions(projectId, assistantId, open);
  return (
    <Drawer title="版本记录" open={open} onClose={onClose} size={460}>
      {versions.isPending && <Skeleton active />}
      {versions.data?.length === 0 && <Empty description="还没有发布过版本" />}
      <ul aria-label="版本列表" className="flex flex-col divide-y divide-gray-100">
        {(versions.data ?? []).map((version: AssistantVersion) => (
          <li key={version.version} className="flex items-start justify-between gap-3 py-3">
            <div className="flex flex-col gap-1">
              <div className="flex items-center gap-2">
                <span className="font-medium">v{version.version}</span>
                {version.version === publishedVersion && <Tag color="green">当前发布</Tag>}
              </div>
              <span className="text-sm text-gray-700">{version.note || '（无版本说明）'}</span>
              <span className="text-xs text-gray-500">
                {dayjs(version.publishedAt).format('YYYY-MM-DD HH:mm')} ·{' '}
                {version.submittedBy
                  ? `${version.submittedBy} 提交 · ${version.publishedBy} 批准`
                  : version.publishedBy}
              </span>
            </div>
            {canRollback && (
              <Popconfirm
                title={`回滚到 v${version.version}？`}
                description="草稿将恢复为该版本的配置，并发布为一个新版本。"
                okText="回滚"
                cancelText="取消"
                onConfirm={() => onRollback(version.version).catch(() => undefined)}
              >
                <Button type="link" size="small" loading={rollingBack}>
                  回滚到此版本
                </Button>
              </Popconfirm>
            )}
          </li>
        ))}
      </ul>
    </Drawer>
  );
}

export function AssistantEditorDialogs({
  dialog,
  onClose,
  assistantId,
  publishedVersion,
  dirty,
  publishing,
  reviewFirst,
  rollingBack,
  onPublish,
  onRollback,
}: {
  dialog: AssistantEditorDialog;
  onClose: () => void;
  /** Unknown until the first save: publishing and versions need a saved assistant. */
  assistantId: string | undefined;
  publishedVersion: number | null;
  dirty: boolean;
  publishing: boolean;
  /** 发布 becomes 提交审核 (see useReviewFirst). */
  reviewFirst: boolean;
  rollingBack: boolean;
  onPublish: (note: string) => Promise<void>;
  onRollback: (version: number) => Promise<void>;
}) {
  return (
    <>
      <AssistantSpeechProviderDrawer open={dialog === 'speechProviders'} onClose={onClose} />
      {assistantId && (
        <>
          <PublishModal
            open={dialog === 'publish'}
            dirty={dirty}
            publishing={publishing}
            reviewFirst={reviewFirst}
            onPublish={onPublish}
            onClose={onClose}
          />
          <VersionDrawer
            open={dialog === 'versions'}
            assistantId={assistantId}
            publishedVersion={publishedVersion}
            canRollback={!reviewFirst}
            rollingBack={rollingBack}
            onRollback={onRollback}
            onClose={onClose}
          />
        </>
      )}
    </>
  );
}
