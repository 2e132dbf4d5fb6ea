import ArrowDownOutlined from '@ant-design/icons/ArrowDownOutlined';
import ArrowUpOutlined from '@ant-design/icons/ArrowUpOutlined';
import DeleteOutlined from '@ant-design/icons/DeleteOutlined';
import PlusOutlined from '@ant-design/icons/PlusOutlined';
import { flowTestCallRequest } from '@callpilot/contracts';
import { Button, Form, Input, Tag } from 'antd';
import { useRef, useState } from 'react';
import { toast } from 'sonner';
import { LiveCallDialog } from '@/entities/call/components/live-call-dialog';
import { useStartFlowTestCall } from '@/features/ivr/api/start-flow-test-call';
import { zodRule } from '@/lib/form-rules';

const MAX_STEPS = 30;
const KEYS_PATTERN = /^[0-9*#]+$/;

type ScriptStep = { id: number; value: string };

/** How the simulated caller will read a step, as the sim carrier does. */
function stepKind(value: string): { label: string; color: string } {
  const text = value.trim();
  if (!text) return { label: '静默', color: 'default' };
  if (text === '挂机') return { label: '挂机', color: 'red' };
  if (KEYS_PATTERN.test(text)) return { label: '按键', color: 'blue' };
  return { label: '说话', color: 'green' };
}

function ScriptEditor({ steps, onChange }: { steps: ScriptStep[]; onChange: (steps: ScriptStep[]) => void }) {
  const nextId = useRef(steps.length + 1);
  const update = (id: number, value: string) =>
    onChange(steps.map((step) => (step.id === id ? { ...step, value } : step)));
  const move = (index: number, by: -1 | 1) => {
    const moved = [...steps];
    const [step] = moved.splice(index, 1);
    if (step) moved.splice(index + by, 0, step);
    onChange(moved);
  };
  return (
    <div className="flex flex-col gap-2">
      <ol aria-label="模拟输入" className="m-0 flex list-none flex-col gap-2 p-0">
        {steps.map((step, index) => {
          const kind = stepKind(step.value);
          return (
            <li key={step.id} className="flex items-center gap-2">
              <span className="w-6 shrink-0 text-right text-xs text-gray-400">{index + 1}</span>
              <Input
                aria-label={`第 ${index + 1} 步`}
                value={step.value}
                maxLength={200}
                placeholder="按键如 1、123#，或要说的话"
                onChange={(event) => update(step.id, event.target.value)}
              />
              <Tag className="!m-0 shrink-0" color={kind.color}>
                {kind.label}
              </Tag>
              <Button
                size="small"
                type="text"
                icon={<ArrowUpOutlined />}
                aria-label={`上移第 ${index + 1} 步`}
                disabled={index === 0}
                onClick={() => move(index, -1)}
              />
              <Button
                size="small"
                type="text"
                icon={<ArrowDownOutlined />}
                aria-label={`下移第 ${index + 1} 步`}
                disabled={index === steps.length - 1}
                onClick={() => move(index, 1)}
              />
              <Button
                size="small"
                type="text"
                danger
                icon={<DeleteOutlined />}
                aria-label={`删除第 ${index + 1} 步`}
                onClick={() => onChange(steps.filter((candidate) => candidate.id !== step.id))}
              />
            </li>
          );
        })}
      </ol>
      <Button
        type="dashed"
        icon={<PlusOutlined />}
        disabled={steps.length >= MAX_STEPS}
        onClick={() => onChange([...steps, { id: nextId.current++, value: '' }])}
      >
        添加一步
      </Button>
    </div>
  );
}

/**
 * 模拟来电: the stored draft answers a simulated caller on the simulated carrier, end to end like a
 * real inbound call, and the call lands in the call records as a test call. The script says what
 * the caller does at each wait; past its end (or without one) the simulated caller answers itself.
 */
export function FlowTestCallDialog({
  open,
  projectId,
  flowId,
  onClose,
}: {
  open: boolean;
  projectId: string;
  flowId: string;
  onClose: () => void;
}) {
  const [form] = Form.useForm<{ callerNumber: string }>();
  const [steps, setSteps] = useState<ScriptStep[]>([]);
  const start = useStartFlowTestCall(projectId, flowId);

  const begin = async () => {
    const { callerNumber } = await form.validateFields();
    const { callId } = await start.mutateAsync({
      callerNumber: callerNumber?.trim() ?? '',
      script: steps.map((step) => step.value.trim()),
    });
    toast.success('模拟来电已发起，结束后可在通话记录中查看');
    return callId;
  };

  return (
    <LiveCallDialog
      title="模拟来电"
      open={open}
      onClose={onClose}
      projectId={projectId}
      onStart={begin}
      starting={start.isPending}
    >
      <p className="mb-4 text-sm text-gray-500">
        用当前已保存的草稿接听一通模拟来电，按真实节奏走完流程，结束后生成测试通话记录（不计入流程统计）。
      </p>
      <Form form={form} layout="vertical" initialValues={{ callerNumber: '' }}>
        <Form.Item
          name="callerNumber"
          label="主叫号码（可选）"
          rules={[zodRule(flowTestCallRequest.shape.callerNumber)]}
        >
          <Input aria-label="主叫号码" placeholder="不填则使用随机手机号" maxLength={11} />
        </Form.Item>
      </Form>
      <div className="flex flex-col gap-1">
        <span className="text-sm">模拟客户的输入（按顺序对应流程的每次等待）</span>
        <span className="text-xs text-gray-400">
          留空则由模拟客户自行应答。数字和 * #
          为按键，其他文字为说的话，空白一步表示不作回应，「挂机」表示挂断。
        </span>
        <ScriptEditor steps={steps} onChange={setSteps} />
      </div>
    </LiveCallDialog>
  );
}
