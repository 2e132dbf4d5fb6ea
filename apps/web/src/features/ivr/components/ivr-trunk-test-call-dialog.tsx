import { type Trunk, type TrunkTestStep, trunkTestCallRequest } from '@callpilot/contracts';
import { Alert, Button, Form, Input, Modal } from 'antd';
import { useEffect, useRef, useState } from 'react';
import { zodRule } from '@/lib/form-rules';
import { RequestError } from '@/lib/request';
import { startTrunkTestCall } from '../api/start-trunk-test-call';

type Outcome = { ok: boolean; message: string };

const ARROWS: Record<TrunkTestStep['direction'], string> = { out: '→', in: '←', info: '·' };

/**
 * 测试呼叫: dials a number through the trunk and lists each SIP step as the server reports it,
 * then the outcome. When the server cannot place it (no SIP on this server), its reason is shown.
 * Closing the dialog hangs up.
 */
export function IvrTrunkTestCallDialog({
  projectId,
  trunk,
  onClose,
}: {
  projectId: string;
  trunk: Trunk;
  onClose: () => void;
}) {
  const [form] = Form.useForm<{ number: string }>();
  const [steps, setSteps] = useState<TrunkTestStep[]>([]);
  const [outcome, setOutcome] = useState<Outcome | null>(null);
  const [refusal, setRefusal] = useState<string | null>(null);
  const [running, setRunning] = useState(false);
  const call = useRef<AbortController | null>(null);

  useEffect(() => () => call.current?.abort(), []);

  const start = async ({ number }: { number: string }) => {
    call.current?.abort();
    const controller = new AbortController();
    call.current = controller;
    setSteps([]);
    setOutcome(null);
    setRefusal(null);
    setRunning(true);
    try {
      await startTrunkTestCall(projectId, trunk.id, number.trim(), {
        signal: controller.signal,
        onEvent: (event) => {
          if (event.type === 'step') setSteps((previous) => [...previous, event.step]);
          else setOutcome({ ok: event.ok, message: event.message });
        },
      });
    } catch (error) {
      if (!controller.signal.aborted) {
        setRefusal(error instanceof RequestError ? error.message : '测试呼叫失败，请稍后重试');
      }
    } finally {
      if (call.current === controller) setRunning(false);
    }
  };

  return (
    <Modal
      open
      title={`测试呼叫 · ${trunk.name}`}
      onCancel={onClose}
      destroyOnHidden
      mask={{ closable: false }}
      footer={
        <div className="flex justify-end gap-2">
          <Button onClick={onClose}>{running ? '挂断并关闭' : '关闭'}</Button>
          <Button type="primary" loading={running} onClick={() => form.submit()}>
            开始呼叫
          </Button>
        </div>
      }
    >
      <p className="mb-4 text-sm text-gray-500">
        经此线路拨打一个号码，逐步显示 SIP 信令过程（邀请、鉴权、振铃、接通或失败原因），接通后自动挂断。
      </p>
      <Form form={form} layout="vertical" initialValues={{ number: '' }} onFinish={start} disabled={running}>
        <Form.Item label="被叫号码" name="number" rules={[zodRule(trunkTestCallRequest.shape.number)]}>
          <Input aria-label="被叫号码" maxLength={33} placeholder="例如 13800138000 或分机号 8001" />
        </Form.Item>
      </Form>
      {refusal && <Alert type="warning" showIcon title={refusal} />}
      {steps.length > 0 && (
        <ol aria-label="SIP 过程" className="flex flex-col gap-1 rounded-md bg-gray-50 p-3 font-mono text-xs">
          {steps.map((step, index) => (
            // Steps only ever append, so their position is their identity.
            // biome-ignore lint/suspicious/noArrayIndexKey: append-only list
            <li key={index} className="flex gap-2">
              <span className="w-16 shrink-0 text-right text-gray-400">+{step.at} ms</span>
              <span className="shrink-0">{ARROWS[step.direction]}</span>
              <span className="break-all">{step.message}</span>
              {step.note && <span className="shrink-0 font-sans text-gray-500">{step.note}</span>}
            </li>
          ))}
        </ol>
      )}
      {running && steps.length === 0 && <p className="text-sm text-gray-500">正在发起呼叫…</p>}
      {outcome && (
        <Alert
          className="!mt-3"
          type={outcome.ok ? 'success' : 'error'}
          showIcon
          title={outcome.ok ? `测试成功：${outcome.message}` : `测试失败：${outcome.message}`}
        />
      )}
    </Modal>
  );
}
