import { CopyOutlined, DeleteOutlined } from '@ant-design/icons';
import { FLOW_NODE_LABELS, type FlowNode, type FlowNodeOf, type FlowNodeType } from '@callpilot/contracts';
import { Alert, Button, Form, Input, InputNumber, Select, Tooltip } from 'antd';
import type { ComponentType } from 'react';
import { toast } from 'sonner';
import { type VoiceChoice, VoicePicker } from '@/components/voice-picker';
import { useRecognizerOptions } from '@/features/ivr/api/get-recognizer-options';
import { useVoiceOptions } from '@/features/ivr/api/get-voice-options';
import { selectCurrentProjectId, useUserStore } from '@/stores/user-store';
import { ConditionForm } from './forms/condition-form';
import { Field, type NodeFormProps, useNodeFieldErrors, useNodeSetter } from './forms/fields';
import { CollectForm, MenuForm, SpeechForm } from './forms/input-forms';
import { HangupForm, PlayForm, SetForm, SmsForm, TransferForm, VoicemailForm } from './forms/prompt-forms';
import { AssistantForm, HttpForm, SubflowForm } from './forms/service-forms';
import { NODE_META } from './node-meta';
import { selectSelectedNode, useFlowEditorStore } from './store';

function StartForm() {
  return (
    <Alert
      type="info"
      showIcon
      title="来电接通后流程从这里开始。把「下一步」连到第一个节点，例如欢迎语放音。"
    />
  );
}

function ReturnForm() {
  return (
    <Alert
      type="info"
      showIcon
      title="作为子流程运行时，到这里回到调用它的流程，从其「子流程」节点的下一步继续；直接接听来电时到这里结束通话。"
    />
  );
}

// biome-ignore lint/suspicious/noExplicitAny: each form takes its own node type; the switch below pairs them
const FORMS: Record<FlowNodeType, ComponentType<NodeFormProps<any>>> = {
  start: StartForm,
  return: ReturnForm,
  play: PlayForm,
  menu: MenuForm,
  collect: CollectForm,
  speech: SpeechForm,
  condition: ConditionForm,
  assistant: AssistantForm,
  transfer: TransferForm,
  voicemail: VoicemailForm,
  sms: SmsForm,
  http: HttpForm,
  set: SetForm,
  subflow: SubflowForm,
  hangup: HangupForm,
};

function NodePanel({ node }: { node: FlowNode }) {
  const errors = useNodeFieldErrors(node);
  const set = useNodeSetter(node as FlowNodeOf<FlowNodeType>);
  const updateNode = useFlowEditorStore((s) => s.updateNode);
  const deleteElements = useFlowEditorStore((s) => s.deleteElements);
  const copySelection = useFlowEditorStore((s) => s.copySelection);
  const NodeForm = FORMS[node.type];
  const meta = NODE_META[node.type];
  return (
    <>
      <div className="flex items-center gap-2 border-b border-gray-100 px-4 py-3">
        <span style={{ color: meta.color }}>{meta.icon}</span>
        <h2 className="text-base font-medium text-gray-900">{FLOW_NODE_LABELS[node.type]}</h2>
        <span className="ml-auto flex gap-1">
          {node.type !== 'start' && (
            <>
              <Tooltip title="复制节点（Ctrl+C）">
                <Button
                  type="text"
                  aria-label="复制节点"
                  icon={<CopyOutlined />}
                  onClick={() => {
                    if (copySelection() > 0)
                      toast.success('已复制节点，可在本流程或其他流程中粘贴（Ctrl+V）');
                  }}
                />
              </Tooltip>
              <Tooltip title="删除节点（Delete）">
                <Button
                  type="text"
                  danger
                  aria-label="删除节点"
                  icon={<DeleteOutlined />}
                  onClick={() => deleteElements([node.id], [])}
                />
              </Tooltip>
            </>
          )}
        </span>
      </div>
      <Form layout="vertical" component={false}>
        <div className="px-4 pt-3 pb-6">
          <Field label="节点名称" error={errors.name}>
            {(id) => (
              <Input
                id={id}
                value={node.name}
                maxLength={40}
                placeholder={FLOW_NODE_LABELS[node.type]}
                onChange={(event) =>
                  updateNode(node.id, (current) => ({ ...current, name: event.target.value }), 'name')
                }
              />
            )}
          </Field>
          <NodeForm node={node} errors={errors} set={set} />
        </div>
      </Form>
    </>
  );
}

function SettingsPanel() {
  const projectId = useUserStore(selectCurrentProjectId) ?? '';
  const settings = useFlowEditorStore((s) => s.graph.settings);
  const updateSettings = useFlowEditorStore((s) => s.updateSettings);
  const voices = useVoiceOptions(projectId);
  const recognizers = useRecognizerOptions(projectId);
  const voice = settings.voice;
  return (
    <>
      <div className="border-b border-gray-100 px-4 py-3">
        <h2 className="text-base font-medium text-gray-900">流程设置</h2>
        <p className="text-xs text-gray-500">选中画布上的节点可编辑它的设置</p>
      </div>
      <Form layout="vertical" component={false}>
        <div className="px-4 pt-3 pb-6">
          <Field label="音色" extra="放音、菜单等提示音用这个音色朗读">
            {(id) => (
              <VoicePicker
                id={id}
                voices={voices.data}
                loading={voices.isPending}
                value={{ provider: voice.provider, voiceId: voice.voiceId }}
                onChange={(choice: VoiceChoice) =>
                  updateSettings((current) => ({
                    ...current,
                    voice: { ...current.voice, provider: choice.provider, voiceId: choice.voiceId },
                  }))
                }
              />
            )}
          </Field>
          <div className="grid grid-cols-2 gap-3">
            <Field label="语速">
              {(id) => (
                <InputNumber
                  id={id}
                  className="!w-full"
                  min={0.5}
                  max={2}
                  step={0.1}
                  precision={1}
                  value={voice.speed}
                  onChange={(speed) => {
                    if (typeof speed === 'number')
                      updateSettings(
                        (current) => ({ ...current, voice: { ...current.voice, speed } }),
                        'speed',
                      );
                  }}
                />
              )}
            </Field>
            <Field label="音量">
              {(id) => (
                <InputNumber
                  id={id}
                  className="!w-full"
                  min={0}
                  max={100}
                  precision={0}
                  value={voice.volume}
                  onChange={(volume) => {
                    if (typeof volume === 'number')
                      updateSettings(
                        (current) => ({ ...current, voice: { ...current.voice, volume } }),
                        'volume',
                      );
                  }}
                />
              )}
            </Field>
          </div>
          <Field label="语音识别配置" extra="「语音识别」节点用它听懂来电者说的话">
            {(id) => (
              <Select
                id={id}
                loading={recognizers.isPending}
                value={settings.recognizerId ?? ''}
                onChange={(value: string) =>
                  updateSettings((current) => ({ ...current, recognizerId: value || null }))
                }
                options={[
                  { value: '', label: '跟随语音配置（主识别）' },
                  ...(recognizers.data ?? []).map((profile) => ({ value: profile.id, label: profile.name })),
                ]}
              />
            )}
          </Field>
        </div>
      </Form>
    </>
  );
}

/** The right-hand panel: the selected node's settings, or the flow's when nothing (or many) is selected. */
export function FlowSidePanel() {
  const node = useFlowEditorStore(selectSelectedNode);
  return (
    <aside
      aria-label={node ? '节点设置' : '流程设置'}
      className="h-full overflow-y-auto border-l border-gray-200 bg-white"
    >
      {node ? <NodePanel key={node.id} node={node} /> : <SettingsPanel />}
    </aside>
  );
}
