import type { ProjectNumber } from '@callpilot/contracts';
import { Button, Empty, Form, Modal, Radio, Select } from 'antd';
import { useState } from 'react';
import { Link } from 'react-router';
import { toast } from 'sonner';
import { paths } from '@/config/paths';
import { isPublished, useAssistantOptions } from '@/entities/assistant/api/get-assistant-options';
import { useBindNumberInbound } from '../api/bind-number-inbound';
import { isPublishedFlow, useFlowOptions } from '../api/get-flow-options';

type Answerer = 'assistant' | 'flow';

/**
 * 呼入设置: who answers the calls to this number, an assistant or a call flow (a number has one
 * or the other), or nobody (calls are then rejected).
 */
export function IvrInboundDialog({
  projectId,
  number,
  onClose,
}: {
  projectId: string;
  number: ProjectNumber;
  onClose: () => void;
}) {
  const [answerer, setAnswerer] = useState<Answerer>(number.inboundFlowId ? 'flow' : 'assistant');
  const assistants = useAssistantOptions(projectId);
  const flows = useFlowOptions(projectId, { enabled: answerer === 'flow' });
  const bind = useBindNumberInbound(projectId);
  const [assistantId, setAssistantId] = useState<string | undefined>(number.inboundAssistantId ?? undefined);
  const [flowId, setFlowId] = useState<string | undefined>(number.inboundFlowId ?? undefined);

  const assistantOptions = (assistants.data ?? []).filter(isPublished).map((assistant) => ({
    value: assistant.id,
    label: `${assistant.name}（v${assistant.publishedVersion}）`,
  }));
  // The bound assistant may have been unpublished since; it stays visible as the current choice.
  if (
    number.inboundAssistantId &&
    !assistantOptions.some((option) => option.value === number.inboundAssistantId)
  ) {
    assistantOptions.unshift({
      value: number.inboundAssistantId,
      label: number.inboundAssistantName ?? '当前小助手',
    });
  }
  // Unpublished flows are listed but not choosable: the owner sees the flow exists and why not.
  const flowOptions = (flows.data ?? []).map((flow) => ({
    value: flow.id,
    label: isPublishedFlow(flow) ? `${flow.name}（v${flow.publishedVersion}）` : `${flow.name}（未发布）`,
    disabled: !isPublishedFlow(flow),
  }));
  if (number.inboundFlowId && !flowOptions.some((option) => option.value === number.inboundFlowId)) {
    flowOptions.unshift({
      value: number.inboundFlowId,
      label: number.inboundFlowName ?? '当前流程',
      disabled: false,
    });
  }

  const bound = Boolean(number.inboundAssistantId || number.inboundFlowId);
  const chosen = answerer === 'flow' ? flowId : assistantId;
  const unchanged =
    answerer === 'flow' ? flowId === number.inboundFlowId : assistantId === number.inboundAssistantId;

  const save = (next: { assistantId: string | null; flowId: string | null }) =>
    bind.mutate(
      { number: number.number, ...next },
      {
        onSuccess: (saved) => {
          toast.success(
            saved.inboundFlowName
              ? `${saved.number} 的来电将由流程「${saved.inboundFlowName}」接听`
              : saved.inboundAssistantName
                ? `${saved.number} 的来电将由「${saved.inboundAssistantName}」接听`
                : `已解除 ${saved.number} 的呼入绑定`,
          );
          onClose();
        },
      },
    );

  const noAssistant = assistants.isSuccess && assistantOptions.length === 0;
  const noFlow = flows.isSuccess && flowOptions.length === 0;

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
            {bound && (
              <Button
                danger
                disabled={bind.isPending}
                onClick={() => save({ assistantId: null, flowId: null })}
              >
                解除绑定
              </Button>
            )}
          </span>
          <span className="flex gap-2">
            <Button onClick={onClose}>取消</Button>
            <Button
              type="primary"
              loading={bind.isPending}
              disabled={!chosen || unchanged}
              onClick={() =>
                chosen &&
                save(
                  answerer === 'flow'
                    ? { assistantId: null, flowId: chosen }
                    : { assistantId: chosen, flowId: null },
                )
              }
            >
              保存
            </Button>
          </span>
        </div>
      }
    >
      <p className="mb-4 text-sm text-gray-500">
        拨打此号码的来电由所选小助手或通话流程的已发布版本接听；未绑定的号码来电将被拒接。
      </p>
      <Form layout="vertical">
        <Form.Item label="接听方式">
          <Radio.Group
            aria-label="接听方式"
            optionType="button"
            value={answerer}
            onChange={(event) => setAnswerer(event.target.value as Answerer)}
            options={[
              { value: 'assistant', label: '智能小助手' },
              { value: 'flow', label: '通话流程' },
            ]}
          />
        </Form.Item>
        {answerer === 'assistant' &&
          (noAssistant ? (
            <Empty image={Empty.PRESENTED_IMAGE_SIMPLE} description="还没有已发布的小助手">
              <Link to={paths.assistantList}>前往智能小助手发布</Link>
            </Empty>
          ) : (
            <Form.Item label="接听小助手">
              <Select
                aria-label="接听小助手"
                placeholder="请选择已发布的小助手"
                showSearch={{ optionFilterProp: 'label' }}
                loading={assistants.isPending}
                options={assistantOptions}
                value={assistantId}
                onChange={setAssistantId}
              />
            </Form.Item>
          ))}
        {answerer === 'flow' &&
          (noFlow ? (
            <Empty image={Empty.PRESENTED_IMAGE_SIMPLE} description="还没有通话流程">
              <Link to={paths.ivrFlows}>前往通话流程新建</Link>
            </Empty>
          ) : (
            <Form.Item
              label="接听流程"
              extra="只有已发布的流程可以接听来电；修改流程后需重新发布才对来电生效。"
            >
              <Select
                aria-label="接听流程"
                placeholder="请选择已发布的流程"
                showSearch={{ optionFilterProp: 'label' }}
                loading={flows.isPending}
                options={flowOptions}
                value={flowId}
                onChange={setFlowId}
              />
            </Form.Item>
          ))}
      </Form>
    </Modal>
  );
}
