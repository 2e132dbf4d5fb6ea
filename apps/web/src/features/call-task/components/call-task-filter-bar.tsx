import { TASK_STATE_LABELS, type TaskState } from '@callpilot/contracts';
import { Button, DatePicker, Form, Input, Select, Space } from 'antd';
import dayjs, { type Dayjs } from 'dayjs';
import { useAssistantOptions } from '@/entities/assistant/api/get-assistant-options';
import type { CallTaskFilters } from '../utils/call-task-filters';

type FormValues = {
  name?: string;
  state?: TaskState;
  assistantId?: string;
  created?: [Dayjs, Dayjs] | null;
};

const stateOptions = (Object.keys(TASK_STATE_LABELS) as TaskState[]).map((value) => ({
  value,
  label: TASK_STATE_LABELS[value],
}));

function toFormValues(filters: CallTaskFilters): FormValues {
  return {
    name: filters.name ?? '',
    state: filters.state,
    assistantId: filters.assistantId,
    created: filters.created ? [dayjs(filters.created.from), dayjs(filters.created.to)] : null,
  };
}

function toFilters(values: FormValues): CallTaskFilters {
  const name = values.name?.trim();
  const [start, end] = values.created ?? [];
  return {
    ...(name ? { name } : {}),
    ...(values.state ? { state: values.state } : {}),
    ...(values.assistantId ? { assistantId: values.assistantId } : {}),
    // Whole days: a task created at 23:59 on the last day is inside the range.
    ...(start && end
      ? { created: { from: start.startOf('day').toISOString(), to: end.endOf('day').toISOString() } }
      : {}),
  };
}

export function CallTaskFilterBar({
  projectId,
  filters,
  onSearch,
}: {
  projectId: string | undefined;
  filters: CallTaskFilters;
  onSearch: (filters: CallTaskFilters) => void;
}) {
  const [form] = Form.useForm<FormValues>();
  const assistants = useAssistantOptions(projectId);

  return (
    <Form<FormValues>
      form={form}
      layout="inline"
      className="flex flex-wrap gap-y-3"
      initialValues={toFormValues(filters)}
      onFinish={(values) => onSearch(toFilters(values))}
    >
      <Form.Item name="name" label="名称">
        <Input aria-label="名称" placeholder="任务名称" allowClear maxLength={50} className="!w-44" />
      </Form.Item>
      <Form.Item name="state" label="状态">
        <Select aria-label="状态" allowClear placeholder="全部" options={stateOptions} className="!w-28" />
      </Form.Item>
      <Form.Item name="assistantId" label="小助手">
        <Select
          aria-label="小助手"
          allowClear
          showSearch={{ optionFilterProp: 'label' }}
          placeholder="全部"
          loading={assistants.isPending && Boolean(projectId)}
          options={(assistants.data ?? []).map(({ id, name }) => ({ value: id, label: name }))}
          className="!w-44"
        />
      </Form.Item>
      <Form.Item name="created" label="创建日期">
        <DatePicker.RangePicker aria-label="创建日期" />
      </Form.Item>
      <Form.Item>
        <Space>
          <Button type="primary" htmlType="submit">
            查询
          </Button>
          <Button
            onClick={() => {
              form.setFieldsValue({ name: '', state: undefined, assistantId: undefined, created: null });
              onSearch({});
            }}
          >
            重置
          </Button>
        </Space>
      </Form.Item>
    </Form>
  );
}
