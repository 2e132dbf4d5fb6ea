import type { ProjectNumber } from '@callpilot/contracts';
import { Button, Empty, Form, Modal, Select } from 'antd';
import { useState } from 'react';
import { Link } from 'react-router';
import { toast } from 'sonner';
import { paths } from '@/config/paths';
import { isPublished, useAssistantOptions } from '@/entities/assistant/api/get-assistant-options';
import { useBindNumberInbound } from '../api/bind-number-inbound';

/** 呼入设置: which assistant answers the calls to this number, or none (calls are then rejected). */
export function IvrInboundDialog({
  projectId,
  number,
  onClose,
}: {
  projectId: string;
  number: ProjectNumber;
  onClose: () => void;
}) {
  const assistants = useAssistantOptions(projectId);
  const bind = useBindNumberInbound(projectId);
  const [assistantId, setAssistantId] = useState<string | undefined>(number.inboundAssistantId ?? undefined);
  const published = (assistants.data ?? []).filter(isPublished);
  const options = published.map((assistant) => ({
    value: assistant.id,
    label: `${assistant.name}（v${assistant.publishedVersion}）`,
  }));
  // The bound assistant may have been unpublished since; it stays visible as the current choice.
  if (number.inboundAssistantId && !options.some((option) => option.value === number.inboundAssistantId)) {
    options.unshift({ value: number.inboundAssistantId, label: number.inboundAssistantName ?? '当前小助手' });
  }

  const save = (next: string | null) =>
    bind.mutate(
      { number: number.number, assistantId: next },
      {
        onSuccess: (saved) => {
          toast.success(
            saved.inboundAssistantName
              ? `${saved.number} 的来电将由「${saved.inboundAssistantName}」接听`
              : `已解除 ${saved.number} 的呼入绑定`,
          );
          onClose();
        },
      },
    );

  const noneToChoose = assistants.isSuccess && options.length === 0;

  return (
    <Modal
      open
      title={`呼入设置 · ${number.number}`}
      onCancel={onClose}
      destroyOnHidden
      mask={{ closable: false }}
      footer={
        <div className="flex justify-between gap-2">
          <span>
            {number.inboundAssistantId && (
              <Button danger disabled={bind.isPending} onClick={() => save(null)}>
                解除绑定
              </Button>
            )}
          </span>
          <span className="flex gap-2">
            <Button onClick={onClose}>取消</Button>
            <Button
              type="primary"
              loading={bind.isPending}
              disabled={!assistantId || assistantId === number.inboundAssistantId}
              onClick={() => assistantId && save(assistantId)}
            >
              保存
            </Button>
          </span>
        </div>
      }
    >
      <p className="mb-4 text-sm text-gray-500">
        拨打此号码的来电由所选小助手的已发布版本接听；未绑定的号码来电将被拒接。
      </p>
      {noneToChoose ? (
        <Empty image={Empty.PRESENTED_IMAGE_SIMPLE} description="还没有已发布的小助手">
          <Link to={paths.assistantList}>前往智能小助手发布</Link>
        </Empty>
      ) : (
        <Form layout="vertical">
          <Form.Item label="接听小助手">
            <Select
              aria-label="接听小助手"
              placeholder="请选择已发布的小助手"
              showSearch={{ optionFilterProp: 'label' }}
              loading={assistants.isPending}
              options={options}
              value={assistantId}
              onChange={setAssistantId}
            />
          </Form.Item>
        </Form>
      )}
    </Modal>
  );
}
