import {
  SPEECH_VENDOR_DEFAULTS,
  SPEECH_VENDOR_LABELS,
  SPEECH_VENDOR_RULES,
  type SpeechProvider,
  type SpeechProviderTestResult,
  type SpeechProviderWriteRequest,
  type SpeechVendor,
  speechProviderWriteRequest,
} from '@callpilot/contracts';
import { Form, Input, Select } from 'antd';
import { zodRule } from '@/lib/form-rules';
import { selectCurrentProjectId, useUserStore } from '@/stores/user-store';
import { useDeleteSpeechProvider } from '../api/delete-speech-provider';
import { useSpeechProviders } from '../api/get-speech-providers';
import { useSaveSpeechProvider } from '../api/save-speech-provider';
import { useTestSpeechProvider } from '../api/test-speech-provider';
import {
  type ProfileEditing,
  ProviderKeyFields,
  ProviderProfileDrawer,
  ProviderProfileForm,
} from './assistant-provider-profiles';

const vendorOptions = (Object.keys(SPEECH_VENDOR_LABELS) as SpeechVendor[]).map((value) => ({
  value,
  label: SPEECH_VENDOR_LABELS[value],
}));

type VendorField = 'baseUrl' | 'model' | 'appId' | 'keyId';

interface FieldCopy {
  label: string;
  help?: string;
  placeholder?: string;
  /** A fixed choice instead of free text. */
  options?: { value: string; label: string }[];
}

/** How each vendor names the profile's columns, in the order its console shows them. */
const VENDOR_FORM: Record<
  SpeechVendor,
  { fields: [VendorField, FieldCopy][]; key: { label: string; help: string } }
> = {
  openai_compatible: {
    fields: [
      [
        'baseUrl',
        {
          label: '接口地址',
          help: 'OpenAI 兼容的语音转写接口（/audio/transcriptions），如 https://api.openai.com/v1',
          placeholder: 'https://',
        },
      ],
      ['model', { label: '识别模型', placeholder: '如：whisper-1' }],
    ],
    key: { label: 'API Key', help: '仅保存在服务器，不会再显示' },
  },
  funasr: {
    fields: [
      [
        'baseUrl',
        {
          label: '服务地址',
          help: '自部署 FunASR 实时语音识别服务的 websocket 地址（ws:// 或 wss://），默认端口 10095',
          placeholder: 'ws://10.0.0.5:10095',
        },
      ],
      [
        'model',
        {
          label: '模式（2pass/online）',
          help: '2pass：边说边出字，每句话结束后用离线模型修正（推荐）；online：只用流式模型，更快但准确率略低',
          options: [
            { value: '2pass', label: '2pass（流式 + 离线修正）' },
            { value: 'online', label: 'online（仅流式）' },
          ],
        },
      ],
    ],
    key: {
      label: '访问令牌（可选）',
      help: '仅当服务前有要求 Bearer 令牌的反向代理时填写；仅保存在服务器，不会再显示',
    },
  },
  aliyun_nls: {
    fields: [
      [
        'appId',
        {
          label: 'Appkey',
          help: '智能语音交互控制台中项目的 Appkey；项目须选用中文 8000Hz（电话）模型',
        },
      ],
      [
        'keyId',
        { label: 'AccessKey ID', help: '用于获取访问令牌（Token），建议使用仅有智能语音交互权限的 RAM 用户' },
      ],
      [
        'baseUrl',
        {
          label: '网关地址',
          help: '默认上海地域；其他地域如 wss://nls-gateway-cn-beijing.aliyuncs.com/ws/v1',
        },
      ],
    ],
    key: { label: 'AccessKey Secret', help: '仅保存在服务器，不会再显示' },
  },
  tencent: {
    fields: [
      ['appId', { label: 'AppID', help: '腾讯云账号的 AppID（数字），见访问管理 › API 密钥管理' }],
      ['keyId', { label: 'SecretId' }],
      [
        'model',
        {
          label: '识别引擎',
          help: '电话音频为 8 kHz：8k_zh（中文通用）、8k_zh_large（中文大模型）等',
          placeholder: '8k_zh',
        },
      ],
      ['baseUrl', { label: '服务地址', help: '默认 asr.cloud.tencent.com' }],
    ],
    key: { label: 'SecretKey', help: '仅保存在服务器，不会再显示' },
  },
};

/** The vendor's fields as a profile of `vendor` starts: the stored ones, or the vendor's defaults. */
function vendorValues(vendor: SpeechVendor, editing: ProfileEditing<SpeechProvider>) {
  if (editing !== 'new' && editing.vendor === vendor) {
    const { baseUrl, model, appId, keyId } = editing;
    return { baseUrl, model, appId, keyId };
  }
  return { ...SPEECH_VENDOR_DEFAULTS[vendor], appId: '', keyId: '' };
}

/** The vendor select, then that vendor's own fields with its own names and rules. */
function SpeechVendorFields({ editing }: { editing: ProfileEditing<SpeechProvider> }) {
  const form = Form.useFormInstance<SpeechProviderWriteRequest>();
  const vendor: SpeechVendor = Form.useWatch('vendor', form) ?? 'openai_compatible';
  const { fields, key } = VENDOR_FORM[vendor];
  const rules = SPEECH_VENDOR_RULES[vendor];
  // A stored key belongs to the stored vendor: the server drops it when the vendor changes.
  const keptKey = editing !== 'new' && editing.vendor === vendor ? editing : undefined;

  const switchTo = (next: SpeechVendor) => {
    const values = vendorValues(next, editing);
    form.setFields(
      (Object.keys(values) as VendorField[]).map((name) => ({ name, value: values[name], errors: [] })),
    );
  };

  return (
    <>
      <Form.Item label="服务类型" name="vendor">
        <Select options={vendorOptions} onChange={switchTo} />
      </Form.Item>
      <Form.Item label="配置名称" name="name" rules={[zodRule(speechProviderWriteRequest.shape.name)]}>
        <Input placeholder="如：阿里云识别" />
      </Form.Item>
      {/* Keyed by vendor: a field's rules and label change with it, and stale errors must go. */}
      <div key={vendor}>
        {fields.map(([name, copy]) => {
          const schema = rules[name];
          return (
            <Form.Item
              key={name}
              label={copy.label}
              name={name}
              extra={copy.help}
              rules={schema ? [zodRule(schema)] : []}
            >
              {copy.options ? <Select options={copy.options} /> : <Input placeholder={copy.placeholder} />}
            </Form.Item>
          );
        })}
        <ProviderKeyFields
          existing={keptKey}
          label={key.label}
          help={
            editing !== 'new' && editing.hasApiKey && !keptKey
              ? `切换服务类型后原密钥不再使用，请填写${key.label}`
              : key.help
          }
          required={Boolean(rules.secretRequired)}
          clearHint={vendor === 'funasr' ? '服务前没有反向代理时' : '如本地部署等无需密钥的接口'}
        />
      </div>
    </>
  );
}

const describeProfile = (profile: SpeechProvider) =>
  `${SPEECH_VENDOR_LABELS[profile.vendor]} · ${profile.baseUrl}${
    profile.vendor === 'aliyun_nls' ? '' : ` · ${profile.model}`
  }`;

/** What the 语音识别配置 list says and does, in the editor's drawer and on the 语音配置 page. */
export function useSpeechProfileList(enabled: boolean) {
  const projectId = useUserStore(selectCurrentProjectId);
  const profiles = useSpeechProviders(enabled ? projectId : undefined);
  const save = useSaveSpeechProvider(projectId ?? '');
  const test = useTestSpeechProvider(projectId ?? '');
  const remove = useDeleteSpeechProvider(projectId ?? '');
  return {
    title: '语音识别配置',
    intro:
      '配置语音识别服务，小助手在真实线路通话中用它听懂客户说话：FunASR（自部署）、阿里云或腾讯云实时语音识别，或 OpenAI 兼容的转写接口。未选择语音识别配置的小助手使用本项目的主识别配置；都没有时只能识别按键。模拟通话不需要语音识别。',
    emptyText: '暂无语音识别配置',
    addLabel: '添加语音识别配置',
    testLabel: '测试识别',
    deleteWarning: '正被小助手或主备识别使用的配置不能删除。',
    profiles,
    test,
    remove,
    describe: describeProfile,
    keyLabel: (profile: SpeechProvider) => VENDOR_FORM[profile.vendor].key.label.replace('（可选）', ''),
    resultText: (result: SpeechProviderTestResult) =>
      result.ok ? `${result.message}（耗时 ${result.latencyMs} ms）` : `识别失败：${result.message}`,
    renderForm: (editing: ProfileEditing<SpeechProvider>, onDone: () => void) => (
      <ProviderProfileForm<SpeechProviderWriteRequest>
        name="speech-provider"
        addTitle="添加语音识别配置"
        editing={editing}
        initialValues={{
          name: editing === 'new' ? '' : editing.name,
          vendor: editing === 'new' ? 'openai_compatible' : editing.vendor,
          ...vendorValues(editing === 'new' ? 'openai_compatible' : editing.vendor, editing),
        }}
        save={save}
        onDone={onDone}
        ownKeyField
      >
        <SpeechVendorFields editing={editing} />
      </ProviderProfileForm>
    ),
  };
}

/** The project's speech-recognition profiles, from the assistant editor: what a real line listens with. */
export function AssistantSpeechProviderDrawer({ open, onClose }: { open: boolean; onClose: () => void }) {
  const list = useSpeechProfileList(open);
  return (
    <ProviderProfileDrawer<SpeechProvider, SpeechProviderTestResult>
      {...list}
      open={open}
      onClose={onClose}
    />
  );
}
