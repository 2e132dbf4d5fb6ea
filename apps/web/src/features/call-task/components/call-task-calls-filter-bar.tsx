import {
  END_REASON_LABELS,
  type EndReason,
  INTENT_GRADE_LABELS,
  type IntentGrade,
} from '@callpilot/contracts';
import { Button, DatePicker, Form, Input, InputNumber, Select, Space } from 'antd';
import dayjs, { type Dayjs } from 'dayjs';
import { useEffect } from 'react';
import type { GradeFilter, TaskCallFilters } from '../utils/call-task-filters';

type FormValues = {
  range?: [Dayjs, Dayjs] | null;
  endReason?: EndReason[];
  intentGrade?: GradeFilter[];
  number?: string;
  talkMin?: number | null;
  talkMax?: number | null;
};

const endReasonOptions = Object.entries(END_REASON_LABELS).map(([value, label]) => ({ value, label }));
const gradeOptions = [
  ...(Object.entries(INTENT_GRADE_LABELS) as [IntentGrade, string][]).map(([value, label]) => ({
    value,
    label: `${value} ${label}`,
  })),
  { value: 'none', label: '无' },
];

function toFormValues(filters: TaskCallFilters): FormValues {
  return {
    range: filters.range ? [dayjs(filters.range.from), dayjs(filters.range.to)] : null,
    endReason: filters.endReason,
    intentGrade: filters.intentGrade,
    number: filters.number ?? '',
    talkMin: filters.talkMin ?? null,
    talkMax: filters.talkMax ?? null,
  };
}

function toFilters(values: FormValues): TaskCallFilters {
  const [start, end] = values.range ?? [];
  const number = values.number?.trim();
  return {
    ...(start && end ? { range: { from: start.toISOString(), to: end.toISOString() } } : {}),
    endReason: values.endReason ?? [],
    intentGrade: values.intentGrade ?? [],
    ...(number ? { number } : {}),
    ...(typeof values.talkMin === 'number' ? { talkMin: values.talkMin } : {}),
    ...(typeof values.talkMax === 'number' ? { talkMax: values.talkMax } : {}),
  };
}

export function CallTaskCallsFilterBar({
  filters,
  onSearch,
}: {
  filters: TaskCallFilters;
  onSearch: (filters: TaskCallFilters) => void;
}) {
  const [form] = Form.useForm<FormValues>();
  // The filters live in the URL: coming back from a call detail must show what is applied.
  useEffect(() => {
    form.setFieldsValue(toFormValues(filters));
  }, [filters, form]);

  return (
    <Form<FormValues>
      form={form}
      layout="inline"
      className="flex flex-wrap gap-y-3"
      initialValues={toFormValues(filters)}
      onFinish={(values) => onSearch(toFilters(values))}
    >
      <Form.Item name="range" label="时间">
        <DatePicker.RangePicker showTime aria-label="时间范围" />
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
      <Form.Item>
        <Space>
          <Button type="primary" htmlType="submit">
            查询
          </Button>
          <Button
            onClick={() => {
              form.setFieldsValue(toFormValues({ endReason: [], intentGrade: [] }));
              onSearch({ endReason: [], intentGrade: [] });
            }}
          >
            重置
          </Button>
        </Space>
      </Form.Item>
    </Form>
  );
}
