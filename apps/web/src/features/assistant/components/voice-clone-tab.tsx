import {
  SYNTHESIS_VENDOR_LABELS,
  VOICE_CLONE_STATUS_LABELS,
  type VoiceClone,
  type VoiceCloneStatus,
} from '@callpilot/contracts';
import { Alert, Button, Popconfirm, Table, Tag, Typography } from 'antd';
import { useState } from 'react';
import { toast } from 'sonner';
import { useFeatureAvailable } from '@/hooks/use-feature-available';
import { useBalanceLimit } from '@/lib/api/get-balance-limit';
import { selectCurrentProjectId, useUserStore } from '@/stores/user-store';
import { useDeleteVoiceClone } from '../api/delete-voice-clone';
import { useCloneProfiles } from '../api/get-clone-profiles';
import { useVoiceClones } from '../api/get-voice-clones';
import { VoiceCloneCreateDialog } from './voice-clone-create-dialog';

const STATUS_COLORS: Record<VoiceCloneStatus, string> = {
  training: 'processing',
  ready: 'success',
  failed: 'error',
};

const dateTime = (iso: string) =>
  new Date(iso).toLocaleString('zh-CN', { hour12: false, timeZone: 'Asia/Shanghai' });

/**
 * 语音配置 › 声音复刻: the project's cloned voices with their status (asked again every few seconds
 * while one is 复刻中), and for owners and admins 新建复刻 and 删除. Shown only when the project's
 * 声音克隆 limit allows it; the server enforces the same limit.
 */
export function VoiceCloneTab() {
  const projectId = useUserStore(selectCurrentProjectId) ?? '';
  const canManage = useUserStore((state) => state.userInfo.isOwnerOrAdmin);
  const available = useFeatureAvailable('ttsClone');
  // Until the limits are known the feature reads as open; wait rather than flash a create button.
  const limitsKnown = useBalanceLimit(projectId).data !== undefined;
  const clones = useVoiceClones(projectId, available && limitsKnown);
  const profiles = useCloneProfiles(projectId, available && limitsKnown);
  const remove = useDeleteVoiceClone(projectId);
  const [creating, setCreating] = useState(false);

  if (!limitsKnown) return null;
  if (!available) {
    return (
      <Alert
        type="info"
        showIcon
        title="当前项目未开通声音克隆功能"
        description="声音复刻需要开通声音克隆额度，请联系销售开通后再使用。"
      />
    );
  }

  const profileName = (clone: VoiceClone) =>
    profiles.data?.find((p) => p.id === clone.providerId)?.name ?? SYNTHESIS_VENDOR_LABELS[clone.vendor];

  return (
    <div className="space-y-4">
      <div className="flex items-start justify-between gap-4">
        <Typography.Paragraph type="secondary" className="mb-0">
          用 10～20 秒的朗读录音复刻一个声音（阿里云百炼 CosyVoice
          或火山引擎）。复刻完成（可用）后，可以在小助手的音色中选用。
          {!canManage && ' 仅项目所有者或管理员可以复刻或删除声音。'}
        </Typography.Paragraph>
        {canManage && (
          <Button type="primary" onClick={() => setCreating(true)}>
            新建复刻
          </Button>
        )}
      </div>
      <Table<VoiceClone>
        rowKey="id"
        size="middle"
        loading={clones.isLoading}
        dataSource={clones.data ?? []}
        pagination={false}
        locale={{ emptyText: '还没有复刻音色' }}
        columns={[
          { title: '音色名称', dataIndex: 'name' },
          { title: '语音合成配置', key: 'profile', render: (_, clone) => profileName(clone) },
          {
            title: '状态',
            key: 'status',
            render: (_, clone) => (
              <div>
                <Tag color={STATUS_COLORS[clone.status]}>{VOICE_CLONE_STATUS_LABELS[clone.status]}</Tag>
                {clone.failureReason && (
                  <Typography.Text type="danger" className="mt-1 block text-xs">
                    {clone.failureReason}
                  </Typography.Text>
                )}
              </div>
            ),
          },
          {
            title: '录音时长',
            key: 'duration',
            render: (_, clone) => `${(clone.sampleDurationMs / 1000).toFixed(1)} 秒`,
          },
          { title: '创建时间', key: 'createdAt', render: (_, clone) => dateTime(clone.createdAt) },
          ...(canManage
            ? [
                {
                  title: '操作',
                  key: 'actions',
                  render: (_: unknown, clone: VoiceClone) => (
                    <Popconfirm
                      title={`删除复刻音色「${clone.name}」？`}
                      description="服务商处的音色会一并删除，正在使用它的小助手须先改用其他音色。"
                      okText="删除"
                      cancelText="取消"
                      okButtonProps={{ danger: true }}
                      onConfirm={() =>
                        remove.mutateAsync(clone.id).then(() => {
                          toast.success(`已删除复刻音色「${clone.name}」`);
                        })
                      }
                    >
                      <Button type="link" danger size="small" aria-label={`删除「${clone.name}」`}>
                        删除
                      </Button>
                    </Popconfirm>
                  ),
                },
              ]
            : []),
        ]}
      />
      {creating && (
        <VoiceCloneCreateDialog
          projectId={projectId}
          profiles={profiles.data ?? []}
          open={creating}
          onClose={() => setCreating(false)}
        />
      )}
    </div>
  );
}
