import {
  CALL_DIRECTION_LABELS,
  type CallDirection,
  END_REASON_LABELS,
  type EndReason,
  INTENT_GRADE_LABELS,
  type IntentGrade,
} from '@callpilot/contracts';
import { Button, DatePicker, Form, Input, InputNumber, Select, Space } from 'antd';
import dayjs, { type Dayjs } from 'dayjs';
import { useAssistantOptions } from '../api/get-assistant-options';
import { useCallTags } from '../api/get-call-tags';
import { type CallRecordFilters, defaultCallFilters, type GradeFilter } from '../utils/call-record-filters';

type FormValues = {
  range?: [Dayjs, Dayjs] | null;
  direction?: CallDirection;
  endReason?: EndReason[];
  intentGrade?: GradeFilter[];
  assistantId?: string;
  number?: string;
  talkMin?: number | null;
  talkMax?: number | null;
  tags?: string[];
};

const directionOptions = Object.entries(CALL_DIRECTION_LABELS).map(([value, label]) => ({ value, label }));
const endReasonOptions = Object.entries(END_REASON_LABELS).map(([value, label]) => ({ value, label }));
const gradeOptions = [
  ...(Object.entries(INTENT_GRADE_LABELS) as [IntentGrade, string][]).map(([value, label]) => ({
    value,
    label: `${value} ${label}`,
  })),
  { value: 'none', label: '无' },
];

function toFormValues(filters: CallRecordFilters): FormValues {
  return {
    range: filters.range ? [dayjs(filters.range.from), dayjs(filters.range.to)] : null,
    direction: filters.direction,
    endReason: filters.endReason,
    intentGrade: filters.intentGrade,
    assistantId: filters.assistantId,
    number: filters.number,
    talkMin: filters.talkMin ?? null,
    talkMax: filters.talkMax ?? null,
    tags: filters.tags,
  };
}

function toFilters(values: FormValues, current: CallRecordFilters): CallRecordFilters {
  const [start, end] = values.range ?? [];
  const number = values.number?.trim();
  return {
    ...(start && end ? { range: { from: start.toISOString(), to: end.toISOString() } } : {}),
    ...(values.direction ? { direction: values.direction } : {}),
    endReason: values.endReason ?? [],
    intentGrade: values.intentGrade ?? [],
    ...(values.assistantId ? { assistantId: values.assistantId } : {}),
    ...(number ? { number } : {}),
    ...(typeof values.talkMin === 'number' ? { talkMin: values.talkMin } : {}),
    ...(typeof values.talkMax === 'number' ? { talkMax: values.talkMax } : {}),
    tags: values.tags ?? [],
    // Sorting is the table's, not the filter bar's: a new search keeps it.
    sort: current.sort,
    order: current.order,
  };
}

export function CallRecordFilterBar({
  projectId,
  filters,
  onSearch,
}: {
  projectId: string | undefined;
  filters: CallRecordFilters;
  onSearch: (filters: CallRecordFilters) => void;
}) {
  const [form] = Form.useForm<FormValues>();
  const assistants = useAssistantOptions(projectId);
  const tags = useCallTags(projectId);

  const reset = () => {
    const defaults = defaultCallFilters();
    form.setFieldsValue({
      ...toFormValues(defaults),
      direction: undefined,
      assistantId: undefined,
      number: '',
    });
    onSearch(defaults);
  };

  return (
    <Form<FormValues>
      form={form}
      layout="inline"
      className="flex flex-wrap gap-y-3"
      initialValues={toFormValues(filters)}
      onFinish={(values) => onSearch(toFilters(values, filters))}
    >
      <Form.Item name="range" label="时间">
        <DatePicker.RangePicker showTime aria-label="时间范围" />
      </Form.Item>
      <Form.Item name="direction" label="方向">
        <Select
          aria-label="方向"
          allowClear
          placeholder="全部"
          options={directionOptions}
          className="!w-28"
        />
      </Form.Item>
      <Form.Item name="endReason" label="结束原因">
        <Select
          aria-label="结束原因"
          mode="multiple"
          allowClear
          maxTagCount="responsive"
          placeholder="全部"
          options={endReasonOptions}
          className="!w-56"
        />
      </Form.Item>
      <Form.Item name="intentGrade" label="意向等级">
        <Select
          aria-label="意向等级"
          mode="multiple"
          allowClear
          maxTagCount="responsive"
          placeholder="全部"
          options={gradeOptions}
          className="!w-56"
        />
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
      <Form.Item
        name="number"
        label="号码"
        rules={[{ pattern: /^[0-9+\-*#]*$/, message: '号码只能包含数字、+、-、*、#' }]}
      >
        <Input aria-label="号码" placeholder="主叫或被叫号码" allowClear maxLength={20} className="!w-40" />
      </Form.Item>
      <Form.Item label="通话时长">
        <Space.Compact>
          <Form.Item name="talkMin" noStyle>
            <InputNumber aria-label="最短通话时长" min={0} precision={0} placeholder="最短(秒)" />
          </Form.Item>
          <Form.Item
            name="talkMax"
            noStyle
            dependencies={['talkMin']}
            rules={[
              ({ getFieldValue }) => ({
                validator: (_, value: number | null | undefined) => {
                  const min = getFieldValue('talkMin') as number | null | undefined;
                  return typeof min === 'number' && typeof value === 'number' && value < min
                    ? Promise.reject(new Error('最长通话时长不能小于最短通话时长'))
                    : Promise.resolve();
                },
              }),
            ]}
          >
            <InputNumber aria-label="最长通话时长" min={0} precision={0} placeholder="最长(秒)" />
          </Form.Item>
        </Space.Compact>
      </Form.Item>
      <Form.Item name="tags" label="标签">
        <Select
          aria-label="标签"
          mode="multiple"
          allowClear
          maxTagCount="responsive"
          placeholder="全部"
          options={(tags.data ?? []).map((tag) => ({ value: tag, label: tag }))}
          className="!w-44"
        />
      </Form.Item>
      <Form.Item>
        <Space>
          <Button type="primary" htmlType="submit">
            查询
          </Button>
          <Button onClick={reset}>重置</Button>
        </Space>
      </Form.Item>
    </Form>
  );
}
