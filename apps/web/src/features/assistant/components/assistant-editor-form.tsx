import {
  ASSISTANT_USE_LABELS,
  type AssistantUse,
  type AssistantVariable,
  assistantWriteRequest,
  fillVariables,
  INTENT_GRADE_LABELS,
  type IntentGrade,
  OFFLINE_VOICE_PROVIDER,
  type VoiceOption,
} from '@callpilot/contracts';
import {
  Alert,
  Button,
  Form,
  type FormInstance,
  Input,
  InputNumber,
  Select,
  Slider,
  Space,
  Switch,
  Tag,
} from 'antd';
import type { TextAreaRef } from 'antd/es/input/TextArea';
import type { ReactNode } from 'react';
import { useRef, useState } from 'react';
import { Link } from 'react-router';
import { VoicePicker } from '@/components/voice-picker';
import { paths } from '@/config/paths';
import { useKnowledgeBaseOptions } from '../api/get-knowledge-base-options';
import { useLlmProviders } from '../api/get-llm-providers';
import { useSpeechProviders } from '../api/get-speech-providers';
import { useVoices } from '../api/get-voices';
import { previewTts } from '../api/preview-tts';
import { useAudioPlayer } from '../hooks/use-audio-player';
import {
  ASSISTANT_STATUS_LABELS,
  type AssistantFormValues,
  insertAt,
  TRANSFER_WHEN_LABELS,
  VOICEMAIL_ACTION_LABELS,
  variableToken,
} from '../utils/assistant-format';
import { AssistantVariableTable } from './assistant-variable-table';

const MAX_PROMPT = 8000;
const MAX_OPENING = 500;
const GRADES: IntentGrade[] = ['A', 'B', 'C', 'D'];

const nameRules = [
  {
    validator: async (_: unknown, value: string) => {
      const result = assistantWriteRequest.shape.name.safeParse(value ?? '');
      if (!result.success) throw new Error(result.error.issues[0]?.message);
    },
  },
];

const toOptions = <T extends string>(labels: Record<T, string>) =>
  (Object.keys(labels) as T[]).map((value) => ({ value, label: labels[value] }));

/**
 * The voice select as the voiceId field's control: choosing a voice also sets its provider (the
 * hidden field beside it), so one pick names both who speaks and which voice.
 */
function AssistantVoiceSelect({
  id,
  value,
  onChange,
  form,
  voices,
  loading,
}: {
  id?: string;
  value?: string;
  onChange?: (voiceId: string) => void;
  form: FormInstance<AssistantFormValues>;
  voices: VoiceOption[] | undefined;
  loading: boolean;
}) {
  const provider: string = Form.useWatch(['config', 'voice', 'provider'], form) ?? OFFLINE_VOICE_PROVIDER;
  return (
    <VoicePicker
      id={id}
      voices={voices}
      loading={loading}
      value={value === undefined ? undefined : { provider, voiceId: value }}
      onChange={(voice) => {
        form.setFieldValue(['config', 'voice', 'provider'], voice.provider);
        onChange?.(voice.voiceId);
      }}
    />
  );
}

function Section({ title, extra, children }: { title: string; extra?: ReactNode; children: ReactNode }) {
  return (
    <section className="rounded-lg border border-gray-200 bg-white p-5">
      <div className="mb-4 flex items-center justify-between">
        <h2 className="text-base font-semibold text-gray-900">{title}</h2>
        {extra}
      </div>
      {children}
    </section>
  );
}

/** The editor's form body, in the order a user builds an assistant. */
export function AssistantEditorForm({
  form,
  projectId,
  assistantId,
  onEdited,
  onManageSpeechProviders,
}: {
  form: FormInstance<AssistantFormValues>;
  projectId: string;
  /** Unknown until the first save: full-page prompt editing needs a saved assistant. */
  assistantId: string | undefined;
  /** Programmatic edits (variable insertion) do not fire the form's onValuesChange. */
  onEdited: () => void;
  onManageSpeechProviders: () => void;
}) {
  const voices = useVoices(projectId);
  const providers = useLlmProviders(projectId);
  const recognizers = useSpeechProviders(projectId);
  const bases = useKnowledgeBaseOptions(projectId);
  const openingRef = useRef<TextAreaRef>(null);
  const variables: AssistantVariable[] = Form.useWatch(['config', 'variables'], form) ?? [];
  const providerId: string | null = Form.useWatch(['config', 'brain', 'providerId'], form) ?? null;
  const hearingId: string | null = Form.useWatch(['config', 'hearing', 'providerId'], form) ?? null;
  const [previewing, setPreviewing] = useState(false);
  const player = useAudioPlayer();

  const variableNames = variables
    .map((variable) => variable?.name)
    .filter((name): name is string => Boolean(name));
  const samples = Object.fromEntries(variables.filter((v) => v?.name).map((v) => [v.name, v.sample ?? '']));

  const insertIntoOpening = (name: string) => {
    const element = openingRef.current?.resizableTextArea?.textArea;
    const current: string = form.getFieldValue(['config', 'openingLine']) ?? '';
    const start = element?.selectionStart ?? current.length;
    const end = element?.selectionEnd ?? start;
    const next = insertAt(current, variableToken(name), start, end);
    form.setFieldValue(['config', 'openingLine'], next.value);
    onEdited();
    requestAnimationFrame(() => {
      element?.focus();
      element?.setSelectionRange(next.caret, next.caret);
    });
  };

  const playVoice = async () => {
    const voice = form.getFieldValue(['config', 'voice']);
    const opening: string = form.getFieldValue(['config', 'openingLine']) ?? '';
    const text = fillVariables(opening, samples).trim() || '您好，这是音色试听。';
    setPreviewing(true);
    try {
      await player.play(await previewTts(projectId, text.slice(0, 500), voice));
    } finally {
      setPreviewing(false);
    }
  };

  const selectedProvider = providers.data?.find((provider) => provider.id === providerId);

  return (
    <div className="flex flex-col gap-4">
      <Section title="基本信息">
        <div className="grid grid-cols-1 gap-x-4 md:grid-cols-2">
          <Form.Item label="名称" name="name" rules={nameRules}>
            <Input placeholder="如：课程回访小助手" maxLength={50} />
          </Form.Item>
          <Form.Item
            label="描述"
            name="description"
            rules={[{ max: 200, message: '描述不能超过 200 个字符' }]}
          >
            <Input placeholder="一句话说明它的用途" />
          </Form.Item>
          <Form.Item label="用途" name="use">
            <Select<AssistantUse> options={toOptions(ASSISTANT_USE_LABELS)} />
          </Form.Item>
          <Form.Item label="状态" name="status">
            <Select options={toOptions(ASSISTANT_STATUS_LABELS)} />
          </Form.Item>
        </div>
      </Section>

      <Section title="开场白">
        <Form.Item name={['config', 'openingLine']} label="开场白" extra="接通后小助手说的第一句话">
          <Input.TextArea ref={openingRef} rows={3} showCount maxLength={MAX_OPENING} />
        </Form.Item>
        <div className="flex flex-wrap items-center gap-2 text-sm">
          <span className="text-gray-500">插入变量：</span>
          {variableNames.length === 0 && <span className="text-gray-400">请先在「变量」中添加</span>}
          {variableNames.map((name) => (
            <Button key={name} size="small" onClick={() => insertIntoOpening(name)}>
              {variableToken(name)}
            </Button>
          ))}
        </div>
      </Section>

      <Section
        title="提示词"
        extra={
          assistantId ? (
            <Link to={`/assistant/prompt-edit?id=${encodeURIComponent(assistantId)}`}>全屏编辑</Link>
          ) : (
            <span className="text-xs text-gray-400">保存后可全屏编辑</span>
          )
        }
      >
        <Form.Item name={['config', 'systemPrompt']} label="系统提示词">
          <Input.TextArea
            rows={8}
            showCount
            maxLength={MAX_PROMPT}
            placeholder="描述小助手的身份、目标、说话风格和注意事项，可用 {{变量名}} 引用变量"
          />
        </Form.Item>
      </Section>

      <Section title="变量">
        <AssistantVariableTable />
      </Section>

      <Section
        title="音色"
        extra={
          <Link to={`${paths.assistantSpeech}?tab=synthesis`} className="text-sm">
            管理语音合成配置
          </Link>
        }
      >
        <Form.Item name={['config', 'voice', 'provider']} hidden>
          <Input />
        </Form.Item>
        <div className="grid grid-cols-1 gap-x-4 md:grid-cols-3">
          <Form.Item
            label="音色"
            name={['config', 'voice', 'voiceId']}
            extra="离线音色无需联网；语音合成配置的音色更自然，可在「语音配置」中添加"
          >
            <AssistantVoiceSelect form={form} voices={voices.data} loading={voices.isPending} />
          </Form.Item>
          <Form.Item label="语速" name={['config', 'voice', 'speed']}>
            <Slider min={0.5} max={2} step={0.1} />
          </Form.Item>
          <Form.Item label="音量" name={['config', 'voice', 'volume']}>
            <Slider min={0} max={100} />
          </Form.Item>
        </div>
        <Space>
          <Button onClick={playVoice} loading={previewing}>
            试听
          </Button>
          {/* biome-ignore lint/a11y/useMediaCaption: synthesised speech of text shown on the page */}
          <audio ref={player.audioRef} src={player.src} controls={Boolean(player.src)} className="h-8" />
        </Space>
      </Section>

      <Section title="大模型">
        <div className="grid grid-cols-1 gap-x-4 md:grid-cols-2">
          <Form.Item
            label="模型配置"
            name={['config', 'brain', 'providerId']}
            getValueProps={(value: string | null) => ({ value: value ?? '' })}
            normalize={(value: string) => value || null}
            extra={providerId ? undefined : '离线脚本模式：按开场白、知识库和固定话术应答，无需大模型'}
          >
            <Select
              loading={providers.isPending}
              options={[
                { value: '', label: '离线脚本模式' },
                ...(providers.data ?? []).map((provider) => ({ value: provider.id, label: provider.name })),
              ]}
            />
          </Form.Item>
          <Form.Item label="模型" name={['config', 'brain', 'model']}>
            <Input
              disabled={!providerId}
              placeholder={selectedProvider ? `默认：${selectedProvider.model}` : ''}
            />
          </Form.Item>
          <Form.Item label="温度" name={['config', 'brain', 'temperature']}>
            <InputNumber min={0} max={2} step={0.1} className="w-full" disabled={!providerId} />
          </Form.Item>
          <Form.Item label="最大输出长度" name={['config', 'brain', 'maxTokens']}>
            <InputNumber min={16} max={4096} className="w-full" disabled={!providerId} />
          </Form.Item>
        </div>
      </Section>

      <Section
        title="语音识别"
        extra={
          <Button size="small" onClick={onManageSpeechProviders}>
            管理语音识别配置
          </Button>
        }
      >
        <Form.Item
          label="语音识别配置"
          name={['config', 'hearing', 'providerId']}
          getValueProps={(value: string | null) => ({ value: value ?? '' })}
          normalize={(value: string) => value || null}
          extra="真实线路通话中，把客户说的话转成文字交给小助手"
        >
          <Select
            loading={recognizers.isPending}
            options={[
              { value: '', label: '跟随语音配置（主识别）' },
              ...(recognizers.data ?? []).map((profile) => ({ value: profile.id, label: profile.name })),
            ]}
          />
        </Form.Item>
        {!hearingId && (
          <Alert
            type="warning"
            showIcon
            title="未选择语音识别：真实线路通话使用语音配置中的主识别；若语音配置也未设置，只能识别按键，无法听懂客户说话（模拟通话不受影响）"
          />
        )}
        <Form.Item
          label="热词"
          name={['config', 'hearing', 'hotwords']}
          rules={[
            { type: 'array', max: 50, message: '热词最多 50 个' },
            {
              validator: async (_rule, value: string[] | undefined) => {
                if ((value ?? []).some((word) => [...word.trim()].length > 20)) {
                  throw new Error('每个热词不能超过 20 个字符');
                }
              },
            },
          ]}
          extra="产品名、品牌、地名等容易识别错的词，输入后回车；识别时优先识别这些词"
        >
          <Select mode="tags" open={false} suffixIcon={null} placeholder="如：星河宽带、千兆套餐" />
        </Form.Item>
      </Section>

      <Section title="知识库">
        <Form.Item
          label="关联知识库"
          name={['config', 'knowledge', 'baseIds']}
          rules={[{ type: 'array', max: 5, message: '最多关联 5 个知识库' }]}
        >
          <Select
            mode="multiple"
            loading={bases.isPending}
            placeholder="选择知识库，客户提问时从中检索答案"
            optionFilterProp="label"
            options={(bases.data?.items ?? []).map((base) => ({
              value: base.id,
              label: `${base.name}（${base.segmentCount} 段）`,
            }))}
          />
        </Form.Item>
        <div className="grid grid-cols-1 gap-x-4 md:grid-cols-2">
          <Form.Item label="召回条数" name={['config', 'knowledge', 'topK']}>
            <InputNumber min={1} max={10} className="w-full" />
          </Form.Item>
          <Form.Item
            label="置信度阈值"
            name={['config', 'knowledge', 'scoreThreshold']}
            extra="置信度按每个知识库自己的问题校准：0.3 是答错已很少出现的位置；调高则回答更少但更可靠，低于阈值时小助手不作答，改为稍后专人联系或转人工"
          >
            <InputNumber min={0} max={1} step={0.05} className="w-full" />
          </Form.Item>
        </div>
        <Form.Item
          label="大模型改写与重排"
          name={['config', 'knowledge', 'llmAssist']}
          valuePropName="checked"
          extra={
            providerId
              ? '用小助手的大模型把客户的话改写成清楚的问题，并对候选答案重新排序；每轮会增加大模型的耗时'
              : '仅大模型模式可用：请先在上方选择大模型'
          }
        >
          <Switch disabled={!providerId} />
        </Form.Item>
      </Section>

      <Section title="对话设置">
        <div className="grid grid-cols-1 gap-x-4 md:grid-cols-3">
          <Form.Item label="静音超时（秒）" name={['config', 'conversation', 'silenceTimeoutSec']}>
            <InputNumber min={1} max={30} className="w-full" />
          </Form.Item>
          <Form.Item label="静音提示次数" name={['config', 'conversation', 'maxSilenceReprompts']}>
            <InputNumber min={0} max={5} className="w-full" />
          </Form.Item>
          <Form.Item label="最长通话（秒）" name={['config', 'conversation', 'maxCallSeconds']}>
            <InputNumber min={30} max={3600} className="w-full" />
          </Form.Item>
          <Form.Item label="最多对话轮数" name={['config', 'conversation', 'maxTurns']}>
            <InputNumber min={1} max={50} className="w-full" />
          </Form.Item>
          <Form.Item
            label="允许客户打断"
            name={['config', 'conversation', 'allowInterrupt']}
            valuePropName="checked"
          >
            <Switch />
          </Form.Item>
        </div>
        <Form.Item label="静音提示语" name={['config', 'conversation', 'silenceReprompt']}>
          <Input maxLength={200} />
        </Form.Item>
        <Form.Item
          label="结束语关键词"
          name={['config', 'conversation', 'endCallPhrases']}
          extra="客户说出这些词时结束通话，输入后回车"
        >
          <Select mode="tags" open={false} suffixIcon={null} />
        </Form.Item>
        <Form.Item label="结束语" name={['config', 'conversation', 'closingLine']}>
          <Input maxLength={200} />
        </Form.Item>
        <Form.Item label="兜底回复" name={['config', 'conversation', 'fallbackReply']}>
          <Input maxLength={200} />
        </Form.Item>
        <Form.Item label="拒绝后回复" name={['config', 'conversation', 'optOutReply']}>
          <Input maxLength={200} />
        </Form.Item>
        <div className="grid grid-cols-1 gap-x-4 md:grid-cols-2">
          <Form.Item
            label="转接号码"
            name={['config', 'conversation', 'transferNumber']}
            rules={[{ pattern: /^$|^[0-9+\-\s]{3,20}$/, message: '转接号码格式不正确' }]}
          >
            <Input placeholder="如：400-000-0000" />
          </Form.Item>
          <Form.Item label="转人工时机" name={['config', 'conversation', 'transferWhen']}>
            <Select options={toOptions(TRANSFER_WHEN_LABELS)} />
          </Form.Item>
        </div>
        <Form.Item label="转人工提示语" name={['config', 'conversation', 'transferLine']}>
          <Input maxLength={200} />
        </Form.Item>
        <div className="grid grid-cols-1 gap-x-4 md:grid-cols-[200px_1fr]">
          <Form.Item label="遇到语音信箱" name={['config', 'conversation', 'voicemailAction']}>
            <Select options={toOptions(VOICEMAIL_ACTION_LABELS)} />
          </Form.Item>
          <Form.Item label="语音信箱留言" name={['config', 'conversation', 'voicemailMessage']}>
            <Input maxLength={300} />
          </Form.Item>
        </div>
      </Section>

      <Section title="意向规则">
        <div className="flex flex-col gap-3">
          {GRADES.map((grade) => (
            <div key={grade} className="grid grid-cols-1 gap-x-4 md:grid-cols-[120px_1fr_1fr]">
              <div className="pt-1">
                <Tag color={grade === 'A' ? 'green' : grade === 'D' ? 'red' : 'blue'}>{grade}</Tag>
                <span className="text-sm">{INTENT_GRADE_LABELS[grade]}</span>
              </div>
              <Form.Item name={['config', 'intentRules', grade, 'description']} className="mb-2">
                <Input
                  aria-label={`${grade} 类意向说明`}
                  placeholder="什么样的客户算这一类"
                  maxLength={300}
                />
              </Form.Item>
              <Form.Item name={['config', 'intentRules', grade, 'keywords']} className="mb-2">
                <Select
                  aria-label={`${grade} 类意向关键词`}
                  mode="tags"
                  open={false}
                  suffixIcon={null}
                  placeholder="关键词，输入后回车"
                />
              </Form.Item>
            </div>
          ))}
        </div>
      </Section>
    </div>
  );
}
