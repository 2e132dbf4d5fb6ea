import {
  SYNTHESIS_VENDOR_DEFAULTS,
  SYNTHESIS_VENDOR_LABELS,
  SYNTHESIS_VENDOR_RULES,
  type SynthesisProvider,
  type SynthesisProviderTestResult,
  type SynthesisProviderWriteRequest,
  type SynthesisVendor,
  synthesisProviderWriteRequest,
} from '@callpilot/contracts';
import { Alert, Form, Input, Select } from 'antd';
import { zodRule } from '@/lib/form-rules';
import { selectCurrentProjectId, useUserStore } from '@/stores/user-store';
import { useDeleteSynthesisProvider } from '../api/delete-synthesis-provider';
import { useSynthesisProviders } from '../api/get-synthesis-providers';
import { useSaveSynthesisProvider } from '../api/save-synthesis-provider';
import { useTestSynthesisProvider } from '../api/test-synthesis-provider';
import { type ProfileEditing, ProviderKeyFields, ProviderProfileForm } from './assistant-provider-profiles';

const vendorOptions = (Object.keys(SYNTHESIS_VENDOR_LABELS) as SynthesisVendor[]).map((value) => ({
  value,
  label: SYNTHESIS_VENDOR_LABELS[value],
}));

type VendorField = 'baseUrl' | 'model' | 'appId' | 'keyId';

interface FieldCopy {
  label: string;
  help?: string;
  placeholder?: string;
}

/** How each vendor names the profile's columns, in the order its own console shows them. */
const VENDOR_FORM: Record<
  SynthesisVendor,
  { fields: [VendorField, FieldCopy][]; key: { label: string; help: string } }
> = {
  cosyvoice: {
    fields: [
      [
        'model',
        {
          label: '合成模型',
          help: '默认 cosyvoice-v2；音色须与模型对应（cosyvoice-v2 的音色以 _v2 结尾）',
          placeholder: 'cosyvoice-v2',
        },
      ],
      [
        'baseUrl',
        { label: '服务地址', help: '默认百炼（北京）：wss://dashscope.aliyuncs.com/api-ws/v1/inference' },
      ],
    ],
    key: { label: 'API Key', help: '阿里云百炼的 API Key；仅保存在服务器，不会再显示' },
  },
  aliyun_nls: {
    fields: [
      ['appId', { label: 'Appkey', help: '智能语音交互控制台中项目的 Appkey' }],
      [
        'keyId',
        { label: 'AccessKey ID', help: '用于获取访问令牌（Token），建议使用仅有智能语音交互权限的 RAM 用户' },
      ],
      [
        'baseUrl',
        { label: '网关地址', help: '默认上海地域：wss://nls-gateway-cn-shanghai.aliyuncs.com/ws/v1' },
      ],
    ],
    key: { label: 'AccessKey Secret', help: '仅保存在服务器，不会再显示' },
  },
  tencent: {
    fields: [
      ['appId', { label: 'AppID', help: '腾讯云账号的 AppID（数字），见访问管理 › API 密钥管理' }],
      ['keyId', { label: 'SecretId' }],
      ['baseUrl', { label: '服务地址', help: '默认 tts.cloud.tencent.com' }],
    ],
    key: { label: 'SecretKey', help: '仅保存在服务器，不会再显示' },
  },
  openai_compatible: {
    fields: [
      [
        'baseUrl',
        {
          label: '接口地址',
          help: 'OpenAI 兼容的语音合成接口（/audio/speech），如 https://api.openai.com/v1，或自部署 CosyVoice 等服务的地址',
          placeholder: 'https://',
        },
      ],
      ['model', { label: '合成模型', placeholder: '如：tts-1、cosyvoice' }],
    ],
    key: { label: 'API Key', help: '本地部署等无需密钥的服务可不填；仅保存在服务器，不会再显示' },
  },
  volcengine: {
    fields: [
      ['appId', { label: 'APP ID', help: '火山引擎豆包语音控制台中应用的 APP ID' }],
      [
        'model',
        {
          label: '集群',
          help: '预置音色用 volcano_tts（默认），复刻音色用 volcano_icl',
          placeholder: 'volcano_tts',
        },
      ],
      ['baseUrl', { label: '服务地址', help: '默认 https://openspeech.bytedance.com' }],
    ],
    key: { label: 'Access Token', help: '仅保存在服务器，不会再显示' },
  },
};

/** The vendor's fields as a profile of `vendor` starts: the stored ones, or the vendor's defaults. */
function vendorValues(vendor: SynthesisVendor, editing: ProfileEditing<SynthesisProvider>) {
  if (editing !== 'new' && editing.vendor === vendor) {
    const { baseUrl, model, appId, keyId } = editing;
    return { baseUrl, model, appId, keyId };
  }
  return { ...SYNTHESIS_VENDOR_DEFAULTS[vendor], appId: '', keyId: '' };
}

const NEW_VENDOR: SynthesisVendor = 'cosyvoice';

/** The vendor select, then that vendor's own fields with its own names and rules. */
function SynthesisVendorFields({ editing }: { editing: ProfileEditing<SynthesisProvider> }) {
  const form = Form.useFormInstance<SynthesisProviderWriteRequest>();
  const vendor: SynthesisVendor = Form.useWatch('vendor', form) ?? NEW_VENDOR;
  const { fields, key } = VENDOR_FORM[vendor];
  const rules = SYNTHESIS_VENDOR_RULES[vendor];
  // A stored key belongs to the stored vendor: the server drops it when the vendor changes.
  const keptKey = editing !== 'new' && editing.vendor === vendor ? editing : undefined;

  const switchTo = (next: SynthesisVendor) => {
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
      <Form.Item label="配置名称" name="name" rules={[zodRule(synthesisProviderWriteRequest.shape.name)]}>
        <Input placeholder="如：百炼 CosyVoice" />
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
              <Input placeholder={copy.placeholder} />
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
        />
      </div>
    </>
  );
}

const describeProfile = (profile: SynthesisProvider) =>
  `${SYNTHESIS_VENDOR_LABELS[profile.vendor]} · ${profile.baseUrl}${profile.model ? ` · ${profile.model}` : ''}`;

/** A test's answer: what it says, the two times a caller feels, and the sentence itself, playing. */
function SynthesisTestResultView({ result }: { result: SynthesisProviderTestResult }) {
  if (!result.ok) return <Alert type="error" showIcon title={`合成失败：${result.message}`} />;
  return (
    <div className="flex flex-col gap-2">
      <Alert
        type="success"
        showIcon
        title={result.message}
        description={`首包延迟 ${result.firstAudioMs ?? result.latencyMs} ms · 总耗时 ${result.latencyMs} ms`}
      />
      {/* biome-ignore lint/a11y/useMediaCaption: synthesised speech of the test sentence shown above */}
      <audio
        aria-label="测试音频"
        controls
        autoPlay
        className="h-8 w-full"
        src={`data:audio/wav;base64,${result.audioBase64}`}
      />
    </div>
  );
}

/** What the 语音合成配置 list says and does on the 语音配置 page. */
export function useSynthesisProfileList() {
  const projectId = useUserStore(selectCurrentProjectId);
  const profiles = useSynthesisProviders(projectId);
  const save = useSaveSynthesisProvider(projectId ?? '');
  const test = useTestSynthesisProvider(projectId ?? '');
  const remove = useDeleteSynthesisProvider(projectId ?? '');
  return {
    title: '语音合成配置',
    intro:
      '配置语音合成服务，小助手用它的音色说话：阿里云百炼 CosyVoice、阿里云智能语音交互、腾讯云、火山引擎，或 OpenAI 兼容的 /audio/speech 接口（可接自部署的 CosyVoice 等）。未配置时使用离线音色。',
    emptyText: '暂无语音合成配置，小助手使用离线音色',
    addLabel: '添加语音合成配置',
    testLabel: '测试合成',
    deleteWarning: '正被小助手、备用音色或复刻音色使用的配置不能删除。',
    profiles,
    test,
    remove,
    describe: describeProfile,
    keyLabel: (profile: SynthesisProvider) => VENDOR_FORM[profile.vendor].key.label,
    resultText: (result: SynthesisProviderTestResult) =>
      result.ok ? result.message : `合成失败：${result.message}`,
    renderResult: (result: SynthesisProviderTestResult) => <SynthesisTestResultView result={result} />,
    renderForm: (editing: ProfileEditing<SynthesisProvider>, onDone: () => void) => (
      <ProviderProfileForm<SynthesisProviderWriteRequest>
        name="synthesis-provider"
        addTitle="添加语音合成配置"
        editing={editing}
        initialValues={{
          name: editing === 'new' ? '' : editing.name,
          vendor: editing === 'new' ? NEW_VENDOR : editing.vendor,
          ...vendorValues(editing === 'new' ? NEW_VENDOR : editing.vendor, editing),
        }}
        save={save}
        onDone={onDone}
        ownKeyField
      >
        <SynthesisVendorFields editing={editing} />
      </ProviderProfileForm>
    ),
  };
}
