import {
  type AssistantDetail,
  type CallEvent,
  type CallStatus,
  type CallSummary,
  type CallTurn,
  END_REASON_LABELS,
  INTENT_GRADE_LABELS,
  type IntentGrade,
  referencedVariables,
  SIM_PERSONA_LABELS,
  type SimPersona,
} from '@callpilot/contracts';
import { Alert, Button, Form, Input, Modal, Select, Tag } from 'antd';
import { useEffect, useRef, useState } from 'react';
import { Link } from 'react-router';
import { followTestCall, getTestCall } from '../api/follow-test-call';
import { useAssistantVersions } from '../api/get-assistant-versions';
import { useHangUpTestCall, useStartTestCall } from '../api/start-test-call';

type FormValues = { persona: SimPersona; calleeNumber: string; version: number };

type LiveCall = {
  callId: string;
  status: CallStatus;
  summary: CallSummary | null;
  turns: CallTurn[];
  /** The analysis (grade, summary) has arrived. */
  analyzed: boolean;
  following: boolean;
  error?: string;
};

const GRADE_COLORS: Record<IntentGrade, string> = { A: 'green', B: 'blue', C: 'default', D: 'red' };

const personaOptions = (Object.entries(SIM_PERSONA_LABELS) as [SimPersona, string][]).map(
  ([value, label]) => ({
    value,
    label,
  }),
);

function initialVariables(assistant: AssistantDetail): Record<string, string> {
  const values: Record<string, string> = {};
  for (const variable of assistant.config.variables) values[variable.name] = variable.sample;
  const { openingLine, systemPrompt } = assistant.config;
  for (const name of referencedVariables(`${openingLine}\n${systemPrompt}`)) values[name] ??= '';
  return values;
}

function mergeTurns(current: CallTurn[], incoming: CallTurn[]): CallTurn[] {
  const byIndex = new Map(current.map((turn) => [turn.index, turn]));
  for (const turn of incoming) byIndex.set(turn.index, turn);
  return [...byIndex.values()].sort((a, b) => a.index - b.index);
}

function statusText(call: LiveCall): string {
  if (call.status === 'ringing') return '呼叫中';
  if (call.status === 'in_progress') return '通话中';
  const reason = call.summary?.endReason;
  return reason ? `已结束：${END_REASON_LABELS[reason]}` : '已结束';
}

const offset = (ms: number) => {
  const seconds = Math.max(0, Math.floor(ms / 1000));
  return `${String(Math.floor(seconds / 60)).padStart(2, '0')}:${String(seconds % 60).padStart(2, '0')}`;
};

function LiveCallView({ call }: { call: LiveCall }) {
  const listRef = useRef<HTMLOListElement>(null);
  // biome-ignore lint/correctness/useExhaustiveDependencies: follows the transcript as turns arrive
  useEffect(() => {
    listRef.current?.scrollTo?.({ top: listRef.current.scrollHeight });
  }, [call.turns.length]);
  const summary = call.summary;
  return (
    <div className="flex flex-col gap-3">
      <div className="flex flex-wrap items-center gap-2">
        <span className="text-sm text-gray-500">状态</span>
        <Tag color={call.status === 'ended' ? 'default' : 'processing'} aria-label="通话状态">
          {statusText(call)}
        </Tag>
        {call.following && <span className="text-xs text-gray-400">实时跟踪中…</span>}
        <Link className="ml-auto text-sm" to={`/call-record/detail/${encodeURIComponent(call.callId)}`}>
          查看通话记录
        </Link>
      </div>
      {call.error && <Alert type="error" showIcon title={call.error} />}
      <ol
        ref={listRef}
        aria-label="模拟通话内容"
        className="flex max-h-80 min-h-40 flex-col gap-2 overflow-y-auto rounded-md bg-gray-50 p-3"
      >
        {call.turns.length === 0 && (
          <li className="self-center text-sm text-gray-400">
            {call.status === 'ended' ? '没有对话内容' : '等待接通…'}
          </li>
        )}
        {call.turns.map((turn) => (
          <li
            key={turn.index}
            className={
              turn.speaker === 'assistant'
                ? 'max-w-[85%] self-start rounded-lg bg-white px-3 py-2 text-sm shadow-sm'
                : 'max-w-[85%] self-end rounded-lg bg-blue-500 px-3 py-2 text-sm text-white'
            }
          >
            <span className="mr-2 font-mono text-xs opacity-70">
              {turn.speaker === 'assistant' ? '小助手' : '客户'} {offset(turn.startMs)}
            </span>
            {turn.text}
            {turn.dtmf && <span className="ml-1 text-xs opacity-80">（按键 {turn.dtmf}）</span>}
            {turn.interrupted && <span className="ml-1 text-xs opacity-80">（被打断）</span>}
          </li>
        ))}
      </ol>
      {call.analyzed && summary && (
        <section
          aria-label="通话结果"
          className="flex flex-col gap-1 rounded border border-gray-200 p-3 text-sm"
        >
          <div className="flex items-center gap-2">
            <span className="text-gray-500">意向等级</span>
            {summary.intentGrade ? (
              <Tag color={GRADE_COLORS[summary.intentGrade]}>
                {summary.intentGrade} {INTENT_GRADE_LABELS[summary.intentGrade]}
              </Tag>
            ) : (
              <span>-</span>
            )}
          </div>
          <p className="text-gray-700">{summary.summary || '暂无摘要'}</p>
        </section>
      )}
    </div>
  );
}

/**
 * 模拟通话: places a call from this assistant to a simulated callee and shows it live, as a
 * real call would run (ringing, the carrier's outcome, turns, the analysis afterwards).
 */
export function AssistantTestCall({
  open,
  onClose,
  projectId,
  assistant,
  dirty,
}: {
  open: boolean;
  onClose: () => void;
  projectId: string;
  assistant: AssistantDetail;
  dirty: boolean;
}) {
  const [form] = Form.useForm<FormValues>();
  const [variables, setVariables] = useState(() => initialVariables(assistant));
  const [call, setCall] = useState<LiveCall | null>(null);
  const controllerRef = useRef<AbortController | null>(null);
  const start = useStartTestCall(projectId);
  const hangUp = useHangUpTestCall(projectId);
  const versions = useAssistantVersions(projectId, assistant.id, open);

  const stop = () => {
    controllerRef.current?.abort();
    controllerRef.current = null;
    setCall((current) => (current ? { ...current, following: false } : current));
  };

  useEffect(() => () => controllerRef.current?.abort(), []);

  const follow = (callId: string) => {
    const controller = new AbortController();
    controllerRef.current = controller;
    const update = (change: (current: LiveCall) => LiveCall) =>
      setCall((current) => (current && current.callId === callId ? change(current) : current));
    const onEvent = (event: CallEvent) => {
      switch (event.type) {
        case 'started':
          update((current) => ({ ...current, summary: event.call, status: event.call.status }));
          break;
        case 'answered':
          update((current) => ({ ...current, status: current.status === 'ended' ? 'ended' : 'in_progress' }));
          break;
        case 'turn':
          update((current) => ({ ...current, turns: mergeTurns(current.turns, [event.turn]) }));
          break;
        case 'ended':
          update((current) => ({ ...current, summary: event.call, status: 'ended' }));
          break;
        case 'updated':
          update((current) => ({
            ...current,
            summary: event.call,
            status: event.call.status,
            analyzed: true,
          }));
          break;
      }
    };
    followTestCall(projectId, callId, { signal: controller.signal, onEvent })
      .catch((error: unknown) => {
        if (controller.signal.aborted) return;
        update((current) => ({ ...current, error: error instanceof Error ? error.message : '实时跟踪失败' }));
      })
      .finally(() => {
        if (controllerRef.current === controller) update((current) => ({ ...current, following: false }));
      });
    getTestCall(projectId, callId, controller.signal)
      .then((detail) =>
        update((current) => ({
          ...current,
          turns: mergeTurns(detail.turns, current.turns),
          // Events already received are newer than this snapshot; it only fills gaps.
          summary: current.summary ?? detail,
          status: current.status === 'ringing' ? detail.status : current.status,
          analyzed: current.analyzed || detail.analysisBy !== null,
        })),
      )
      .catch(() => undefined);
  };

  const begin = async () => {
    const values = await form.validateFields();
    const { callId } = await start.mutateAsync({
      assistantId: assistant.id,
      persona: values.persona,
      calleeNumber: values.calleeNumber?.trim() ?? '',
      variables,
      ...(values.version > 0 ? { version: values.version } : {}),
    });
    setCall({ callId, status: 'ringing', summary: null, turns: [], analyzed: false, following: true });
    follow(callId);
  };

  const close = () => {
    stop();
    // Reopening starts a new simulation; the finished one stays in the call records.
    setCall(null);
    onClose();
  };

  const versionOptions = [
    { value: 0, label: dirty ? '草稿（已保存的配置）' : '草稿' },
    ...(versions.data ?? []).map((version) => ({
      value: version.version,
      label: `v${version.version}${version.note ? ` · ${version.note}` : ''}`,
    })),
  ];

  return (
    <Modal
      title="模拟通话"
      open={open}
      onCancel={close}
      width={640}
      destroyOnHidden
      footer={
        call ? (
          <div className="flex justify-end gap-2">
            {call.status !== 'ended' && (
              <Button danger loading={hangUp.isPending} onClick={() => hangUp.mutate(call.callId)}>
                挂断
              </Button>
            )}
            <Button onClick={stop} disabled={!call.following}>
              停止跟踪
            </Button>
            <Button
              onClick={() => {
                stop();
                setCall(null);
              }}
            >
              重新模拟
            </Button>
            <Button type="primary" onClick={close}>
              关闭
            </Button>
          </div>
        ) : (
          <div className="flex justify-end gap-2">
            <Button onClick={close}>取消</Button>
            <Button
              type="primary"
              loading={start.isPending}
              onClick={() => void begin().catch(() => undefined)}
            >
              开始模拟
            </Button>
          </div>
        )
      }
    >
      {call ? (
        <LiveCallView call={call} />
      ) : (
        <Form<FormValues>
          form={form}
          layout="vertical"
          initialValues={{ persona: 'interested', calleeNumber: '', version: 0 }}
        >
          <p className="mb-4 text-sm text-gray-500">
            在模拟线路上呼叫一位虚拟客户，通话按真实节奏进行，结束后生成通话记录。
          </p>
          <Form.Item name="persona" label="模拟客户" rules={[{ required: true, message: '请选择模拟客户' }]}>
            <Select aria-label="模拟客户" options={personaOptions} />
          </Form.Item>
          <Form.Item
            name="calleeNumber"
            label="被叫号码（可选）"
            rules={[{ pattern: /^$|^1[3-9]\d{9}$/, message: '被叫号码须为 11 位手机号' }]}
          >
            <Input aria-label="被叫号码" placeholder="不填则使用模拟号码" maxLength={11} />
          </Form.Item>
          <Form.Item name="version" label="版本">
            <Select aria-label="版本" options={versionOptions} loading={versions.isPending} />
          </Form.Item>
          {Object.keys(variables).length > 0 && (
            <fieldset className="flex flex-col gap-2">
              <legend className="mb-2 text-sm text-gray-700">变量</legend>
              {Object.entries(variables).map(([name, value]) => (
                <div key={name} className="grid grid-cols-[8rem_1fr] items-center gap-2 text-sm">
                  <span className="truncate text-gray-500" aria-hidden="true">
                    {name}
                  </span>
                  <Input
                    aria-label={`变量 ${name}`}
                    value={value}
                    maxLength={200}
                    onChange={(event) =>
                      setVariables((current) => ({ ...current, [name]: event.target.value }))
                    }
                  />
                </div>
              ))}
            </fieldset>
          )}
        </Form>
      )}
    </Modal>
  );
}
