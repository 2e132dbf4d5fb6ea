import {
  SMS_PROVIDER_LABELS,
  type SmsProviderKind,
  type SmsSettingsUpdateRequest,
  type SmsSettingsView,
} from '@callpilot/contracts';
import { Alert, Button, Form, Input, InputNumber, Select, Typography } from 'antd';
import { useSaveSmsSettings } from '../api/save-sms-settings';

type FormValues = {
  provider: SmsProviderKind;
  keyId?: string;
  secret?: string;
  sdkAppId?: string;
  region?: string;
  qualificationId?: string;
  dailyCapPerNumber: number;
};

const PROVIDER_OPTIONS = (Object.keys(SMS_PROVIDER_LABELS) as SmsProviderKind[]).map((value) => ({
  value,
  label: SMS_PROVIDER_LABELS[value],
}));

const KEY_LABELS: Record<Exclude<SmsProviderKind, 'outbox'>, { id: string; secret: string }> = {
  aliyun: { id: 'AccessKey ID', secret: 'AccessKey Secret' },
  tencent: { id: 'SecretId', secret: 'SecretKey' },
};

/** The form's values as the contract's request: a blank secret is left out, so the stored one stays. */
function requestOf(values: FormValues): SmsSettingsUpdateRequest {
  const secret = values.secret?.trim() || undefined;
  const dailyCapPerNumber = values.dailyCapPerNumber;
  if (values.provider === 'aliyun') {
    return {
      provider: 'aliyun',
      accessKeyId: values.keyId ?? '',
      accessKeySecret: secret,
      qualificationId: values.qualificationId?.trim() || undefined,
      dailyCapPerNumber,
    };
  }
  if (values.provider === 'tencent') {
    return {
      provider: 'tencent',
      secretId: values.keyId ?? '',
      secretKey: secret,
      sdkAppId: values.sdkAppId ?? '',
      region: values.region ?? '',
      dailyCapPerNumber,
    };
  }
  return { provider: 'outbox', dailyCapPerNumber };
}

/**
 * 服务商设置. The secret is write-only: the server only says whether one is stored, so the field is
 * empty and says that leaving it blank keeps the saved one. Members see the settings read-only.
 */
export function SmsSettingsForm({
  projectId,
  settings,
  canManage,
}: {
  projectId: string;
  settings: SmsSettingsView;
  canManage: boolean;
}) {
  const [form] = Form.useForm<FormValues>();
  const save = useSaveSmsSettings(projectId);
  const provider = Form.useWatch('provider', form) ?? settings.provider;
  const keys = provider === 'outbox' ? null : KEY_LABELS[provider];
  const keyId = Form.useWatch('keyId', form) ?? settings.keyId;
  // A stored secret belongs to the provider and key id it was saved with (the server keeps it only then).
  const secretKept = settings.hasSecret && provider === settings.provider && keyId?.trim() === settings.keyId;

  return (
    <Form<FormValues>
      form={form}
      layout="vertical"
      className="max-w-xl"
      disabled={!canManage || save.isPending}
      initialValues={{
        provider: settings.provider,
        keyId: settings.keyId ?? '',
        secret: '',
        sdkAppId: settings.sdkAppId ?? '',
        region: settings.region ?? '',
        qualificationId: settings.qualificationId ?? '',
        dailyCapPerNumber: settings.dailyCapPerNumber,
      }}
      onFinish={(values) =>
        save.mutate(requestOf(values), { onSuccess: () => form.setFieldValue('secret', '') })
      }
    >
      {!canManage && (
        <Alert className="mb-4" type="info" showIcon title="仅项目所有者或管理员可以修改短信服务商设置" />
      )}
      {save.isError && <Alert className="mb-4" type="error" showIcon title={save.error.message} />}
      {save.isSuccess && <Alert className="mb-4" type="success" showIcon title="已保存" />}
      <Form.Item
        label="短信服务商"
        name="provider"
        extra="开发发件箱不实际发送，短信只出现在发送记录中，适合联调"
      >
        <Select options={PROVIDER_OPTIONS} />
      </Form.Item>
      {keys && (
        <>
          <Form.Item
            label={keys.id}
            name="keyId"
            rules={[{ required: true, whitespace: true, message: `请输入${keys.id}` }]}
          >
            <Input maxLength={128} autoComplete="off" />
          </Form.Item>
          <Form.Item
            label={keys.secret}
            name="secret"
            rules={secretKept ? [] : [{ required: true, whitespace: true, message: `请输入${keys.secret}` }]}
            extra="密钥加密保存，保存后不再显示"
          >
            <Input.Password
              maxLength={128}
              autoComplete="new-password"
              placeholder={secretKept ? '已保存，留空则不修改' : `请输入${keys.secret}`}
            />
          </Form.Item>
        </>
      )}
      {provider === 'aliyun' && (
        <Form.Item
          label="资质 ID"
          name="qualificationId"
          rules={[{ pattern: /^\d{1,20}$/, message: '资质 ID 须为数字' }]}
          extra="阿里云短信控制台「资质管理」中已审核通过的资质 ID；申请签名时需要"
        >
          <Input maxLength={20} />
        </Form.Item>
      )}
      {provider === 'tencent' && (
        <>
          <Form.Item
            label="SmsSdkAppId"
            name="sdkAppId"
            rules={[{ pattern: /^\d{4,20}$/, required: true, message: 'SmsSdkAppId 须为数字' }]}
          >
            <Input maxLength={20} />
          </Form.Item>
          <Form.Item
            label="地域"
            name="region"
            rules={[
              {
                pattern: /^[a-z]{2,4}-[a-z]+(-\d+)?$/,
                required: true,
                message: '地域格式不正确，例如 ap-guangzhou',
              },
            ]}
          >
            <Input maxLength={32} placeholder="例如 ap-guangzhou" />
          </Form.Item>
        </>
      )}
      <Form.Item
        label="每个号码每日上限"
        name="dailyCapPerNumber"
        rules={[
          { required: true, type: 'integer', min: 0, max: 50, message: '每号码每日上限须为 0–50 的整数' },
        ]}
        extra="同一号码每天（北京时间）最多收到的短信条数，0 表示不限"
      >
        <InputNumber min={0} max={50} precision={0} className="w-40" />
      </Form.Item>
      {settings.pushUrls && provider === settings.provider && (
        <section aria-label="回执与上行地址" className="mb-4 rounded bg-gray-50 p-3 text-sm">
          <p className="mb-2 text-gray-600">
            请在{SMS_PROVIDER_LABELS[settings.provider]}控制台配置以下推送地址，送达回执和客户回复（回复
            T、TD、退订、R 即加入免打扰）才能实时回到这里；未配置时每 10 分钟主动查询一次回执。
          </p>
          <Form.Item label="回执推送地址" className="mb-2">
            <Typography.Text copyable code>
              {settings.pushUrls.receipts}
            </Typography.Text>
          </Form.Item>
          <Form.Item label="上行（回复）推送地址" className="mb-0">
            <Typography.Text copyable code>
              {settings.pushUrls.replies}
            </Typography.Text>
          </Form.Item>
        </section>
      )}
      {canManage && (
        <Button type="primary" htmlType="submit" loading={save.isPending}>
          保存
        </Button>
      )}
    </Form>
  );
}
