import { type ProjectNumber, projectNumberWriteRequest } from '@callpilot/contracts';
import { Form, Input, Modal, Select, Switch } from 'antd';
import { toast } from 'sonner';
import { zodRule } from '@/lib/form-rules';
import { useTrunkOptions } from '../api/get-trunks';
import { type ProjectNumberBody, useSaveProjectNumber } from '../api/save-project-number';

const fields = projectNumberWriteRequest.shape;

/** The select's value for the simulated carrier (trunkId null): antd shows a null value as empty. */
const SIM = '';

type FormValues = Omit<ProjectNumberBody, 'trunkId'> & { trunkId: string };

/** 添加号码 / 编辑号码: the number is its identity, so an existing one edits 备注, 线路 and 启用. */
export function IvrNumberFormDialog({
  projectId,
  number,
  onClose,
}: {
  projectId: string;
  /** Absent when adding. */
  number?: ProjectNumber;
  onClose: () => void;
}) {
  const [form] = Form.useForm<FormValues>();
  const save = useSaveProjectNumber(projectId, { creating: !number });
  const trunks = useTrunkOptions(projectId);
  const trunkOptions = [
    { value: SIM, label: '模拟线路' },
    ...(trunks.data ?? []).map((trunk) => ({
      value: trunk.id,
      label: trunk.enabled ? trunk.name : `${trunk.name}（已停用）`,
    })),
  ];
  // The number's trunk, even before the list arrives, so the select never shows a bare id.
  if (number?.trunkId && !trunkOptions.some((option) => option.value === number.trunkId)) {
    trunkOptions.push({ value: number.trunkId, label: number.trunkName ?? '当前线路' });
  }

  const submit = (values: FormValues) =>
    save.mutate(
      {
        number: number?.number ?? values.number.trim(),
        label: values.label?.trim() ?? '',
        enabled: values.enabled,
        trunkId: values.trunkId || null,
      },
      {
        onSuccess: (saved) => {
          toast.success(number ? '号码已保存' : `已添加号码 ${saved.number}`);
          onClose();
        },
      },
    );

  return (
    <Modal
      open
      title={number ? '编辑号码' : '添加号码'}
      okText={number ? '保存' : '添加'}
      onOk={() => form.submit()}
      onCancel={onClose}
      confirmLoading={save.isPending}
      destroyOnHidden
      mask={{ closable: false }}
    >
      <Form<FormValues>
        form={form}
        name="project-number"
        layout="vertical"
        requiredMark={false}
        disabled={save.isPending}
        initialValues={{
          number: number?.number ?? '',
          label: number?.label ?? '',
          enabled: number?.enabled ?? true,
          trunkId: number?.trunkId ?? SIM,
        }}
        onFinish={submit}
      >
        <Form.Item
          label="号码"
          name="number"
          rules={number ? [] : [zodRule(fields.number)]}
          extra={number ? undefined : '手机号或带区号的固话，例如 02188886666'}
        >
          <Input aria-label="号码" maxLength={20} disabled={Boolean(number)} placeholder="请输入号码" />
        </Form.Item>
        <Form.Item label="备注" name="label" rules={[zodRule(fields.label)]}>
          <Input aria-label="备注" maxLength={50} placeholder="例如：上海客服热线（选填）" />
        </Form.Item>
        <Form.Item
          label="线路"
          name="trunkId"
          extra="号码的呼出和呼入经所选线路进行；模拟线路不产生真实通话。线路在「线路管理」中添加。"
        >
          <Select aria-label="线路" options={trunkOptions} loading={trunks.isPending} />
        </Form.Item>
        <Form.Item
          label="启用"
          name="enabled"
          valuePropName="checked"
          extra="停用的号码不能再被呼出任务选作外显号码。"
        >
          <Switch aria-label="启用" />
        </Form.Item>
      </Form>
    </Modal>
  );
}
