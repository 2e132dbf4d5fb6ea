import {
  CALLER_ID_FORMAT_LABELS,
  type CallerIdFormat,
  REGISTER_EXPIRES,
  TRUNK_CONCURRENCY,
  type Trunk,
  type TrunkCodec,
  type TrunkWriteRequest,
  trunkFields,
} from '@callpilot/contracts';
import type { FormRule } from 'antd';
import { Form, Input, InputNumber, Modal, Radio, Select, Switch } from 'antd';
import { toast } from 'sonner';
import { zodRule } from '@/lib/form-rules';
import { useSaveTrunk } from '../api/save-trunk';

type FormValues = Omit<TrunkWriteRequest, 'codecs' | 'peerAddresses'> & {
  /** One of CODEC_ORDERS: the order is the preference offered in SDP. */
  codecs: string;
  /** One address or range per line (commas and spaces also separate), as users paste them. */
  peerAddresses: string;
};

const CODEC_ORDERS = [
  { value: 'PCMA,PCMU', label: 'PCMA 优先，其次 PCMU' },
  { value: 'PCMU,PCMA', label: 'PCMU 优先，其次 PCMA' },
  { value: 'PCMA', label: '仅 PCMA' },
  { value: 'PCMU', label: '仅 PCMU' },
];

const callerIdOptions = (Object.keys(CALLER_ID_FORMAT_LABELS) as CallerIdFormat[]).map((value) => ({
  value,
  label: CALLER_ID_FORMAT_LABELS[value],
}));

const splitAddresses = (text: string | undefined) =>
  (text ?? '')
    .split(/[\s,，;；]+/)
    .map((entry) => entry.trim())
    .filter(Boolean);

const required = (message: string): FormRule => ({ required: true, whitespace: true, message });

/** Each address checked by the server's own rule, so the form names the bad one the same way. */
const peerAddressesRule: FormRule = {
  validator: async (_, value: string | undefined) => {
    const entries = splitAddresses(value);
    if (entries.length === 0) {
      throw new Error('对端地址：至少填写一个 IP 或网段（CIDR），只接受来自这些地址的呼入');
    }
    const result = trunkFields.peerAddresses.safeParse(entries);
    if (!result.success) throw new Error(result.error.issues[0]?.message ?? '对端地址格式不正确');
  },
};

/**
 * 添加线路 / 编辑线路. The fields follow the kind: a register trunk's account, or an IP trunk's
 * addresses. The password is write-only: the server never sends it back, so empty keeps it.
 */
export function IvrTrunkFormDialog({
  projectId,
  trunk,
  onClose,
}: {
  projectId: string;
  /** Absent when adding. */
  trunk?: Trunk;
  onClose: () => void;
}) {
  const [form] = Form.useForm<FormValues>();
  const save = useSaveTrunk(projectId);
  const kind = Form.useWatch('kind', form) ?? trunk?.kind ?? 'register';
  // A password is stored only for a trunk that is a register trunk now.
  const storedPassword = trunk?.kind === 'register' && trunk.hasPassword;

  const submit = (values: FormValues) => {
    const body: TrunkWriteRequest = {
      ...values,
      codecs: values.codecs.split(',') as TrunkCodec[],
      peerAddresses: splitAddresses(values.peerAddresses),
    };
    save.mutate(
      { body, ...(trunk ? { id: trunk.id } : {}) },
      {
        onSuccess: (saved) => {
          toast.success(trunk ? `线路「${saved.name}」已保存` : `已添加线路「${saved.name}」`);
          onClose();
        },
      },
    );
  };

  return (
    <Modal
      open
      title={trunk ? '编辑线路' : '添加线路'}
      okText={trunk ? '保存' : '添加'}
      onOk={() => form.submit()}
      onCancel={onClose}
      confirmLoading={save.isPending}
      destroyOnHidden
      mask={{ closable: false }}
      width={560}
    >
      <Form<FormValues>
        form={form}
        name="sip-trunk"
        layout="vertical"
        requiredMark={false}
        disabled={save.isPending}
        initialValues={{
          name: trunk?.name ?? '',
          kind: trunk?.kind ?? 'register',
          transport: trunk?.transport ?? 'udp',
          registrar: trunk?.registrar ?? '',
          username: trunk?.username ?? '',
          authUsername: trunk?.authUsername ?? '',
          password: '',
          registerExpires: trunk?.registerExpires ?? REGISTER_EXPIRES.default,
          outboundProxy: trunk?.outboundProxy ?? '',
          signallingAddress: trunk?.signallingAddress ?? '',
          peerAddresses: (trunk?.peerAddresses ?? []).join('\n'),
          codecs: (trunk?.codecs ?? ['PCMA', 'PCMU']).join(','),
          callerIdFormat: trunk?.callerIdFormat ?? 'national',
          maxConcurrent: trunk?.maxConcurrent ?? TRUNK_CONCURRENCY.default,
          enabled: trunk?.enabled ?? true,
        }}
        onFinish={submit}
      >
        <Form.Item label="线路名称" name="name" rules={[zodRule(trunkFields.name)]}>
          <Input aria-label="线路名称" maxLength={50} placeholder="例如：电信 SIP 中继" />
        </Form.Item>
        <div className="flex flex-wrap gap-x-8">
          <Form.Item label="对接方式" name="kind">
            <Radio.Group
              aria-label="对接方式"
              options={[
                { value: 'register', label: '注册' },
                { value: 'ip', label: 'IP 对接' },
              ]}
            />
          </Form.Item>
          <Form.Item label="传输协议" name="transport">
            <Radio.Group
              aria-label="传输协议"
              options={[
                { value: 'udp', label: 'UDP' },
                { value: 'tcp', label: 'TCP' },
              ]}
            />
          </Form.Item>
        </div>
        {kind === 'register' ? (
          <>
            <Form.Item
              label="注册服务器"
              name="registrar"
              extra="运营商或 PBX 提供的 SIP 服务器，格式 主机[:端口]"
              rules={[
                required('注册服务器：注册线路须填写，格式应为 主机[:端口]'),
                zodRule(trunkFields.registrar),
              ]}
            >
              <Input aria-label="注册服务器" placeholder="sip.example.com:5060" />
            </Form.Item>
            <Form.Item
              label="用户名"
              name="username"
              rules={[required('用户名：注册线路须填写'), zodRule(trunkFields.username)]}
            >
              <Input aria-label="用户名" maxLength={64} placeholder="通常为中继号码或账号" />
            </Form.Item>
            <Form.Item label="认证用户名" name="authUsername" rules={[zodRule(trunkFields.authUsername)]}>
              <Input aria-label="认证用户名" maxLength={64} placeholder="默认同用户名（选填）" />
            </Form.Item>
            <Form.Item
              label="密码"
              name="password"
              extra={
                storedPassword
                  ? `已填写${trunk?.passwordHint ? `（末位 …${trunk.passwordHint}）` : ''}，留空则不修改`
                  : '仅保存在服务器（加密），不会再显示'
              }
              rules={[
                ...(storedPassword ? [] : [required('密码：注册线路须填写')]),
                zodRule(trunkFields.password),
              ]}
            >
              <Input.Password
                aria-label="密码"
                autoComplete="new-password"
                maxLength={128}
                placeholder={storedPassword ? '留空则不修改' : '请输入密码'}
              />
            </Form.Item>
            <div className="flex flex-wrap gap-x-4">
              <Form.Item
                label="注册有效期（秒）"
                name="registerExpires"
                rules={[zodRule(trunkFields.registerExpires)]}
              >
                {/* No min/max: antd would silently clamp a typed value; the rule says what is allowed. */}
                <InputNumber
                  aria-label="注册有效期"
                  placeholder={`${REGISTER_EXPIRES.min}-${REGISTER_EXPIRES.max}`}
                />
              </Form.Item>
              <Form.Item
                className="flex-1"
                label="出站代理"
                name="outboundProxy"
                rules={[zodRule(trunkFields.outboundProxy)]}
              >
                <Input aria-label="出站代理" placeholder="选填，主机[:端口]" />
              </Form.Item>
            </div>
          </>
        ) : (
          <>
            <Form.Item
              label="信令地址"
              name="signallingAddress"
              extra="呼出时 INVITE 发往的地址，格式 主机[:端口]"
              rules={[
                required('信令地址：IP 对接线路须填写，格式应为 主机[:端口]'),
                zodRule(trunkFields.signallingAddress),
              ]}
            >
              <Input aria-label="信令地址" placeholder="203.0.113.10:5060" />
            </Form.Item>
            <Form.Item
              label="对端地址"
              name="peerAddresses"
              extra="只接受来自这些地址的呼入，其他来源一律拒绝。每行一个 IP 或网段（CIDR）"
              rules={[peerAddressesRule]}
            >
              <Input.TextArea aria-label="对端地址" rows={3} placeholder={'203.0.113.10\n198.51.100.0/24'} />
            </Form.Item>
          </>
        )}
        <div className="flex flex-wrap gap-x-4">
          <Form.Item label="语音编码" name="codecs">
            <Select aria-label="语音编码" options={CODEC_ORDERS} className="!w-52" />
          </Form.Item>
          <Form.Item label="主叫号码格式" name="callerIdFormat">
            <Select aria-label="主叫号码格式" options={callerIdOptions} className="!w-56" />
          </Form.Item>
        </div>
        <div className="flex flex-wrap gap-x-8">
          <Form.Item label="并发上限" name="maxConcurrent" rules={[zodRule(trunkFields.maxConcurrent)]}>
            <InputNumber
              aria-label="并发上限"
              placeholder={`${TRUNK_CONCURRENCY.min}-${TRUNK_CONCURRENCY.max}`}
            />
          </Form.Item>
          <Form.Item label="启用" name="enabled" valuePropName="checked">
            <Switch aria-label="启用" />
          </Form.Item>
        </div>
      </Form>
    </Modal>
  );
}
