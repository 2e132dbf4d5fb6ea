import {
  SMS_MESSAGE_STATUS_LABELS,
  SMS_SOURCE_LABELS,
  type SmsMessageStatus,
  type SmsSource,
} from '@callpilot/contracts';
import { Button, DatePicker, Form, Input, Select, Space, Tag } from 'antd';
import dayjs, { type Dayjs } from 'dayjs';
import { useEffect } from 'react';
import { SMS_LINK_FILTERS, type SmsRecordFilters } from '../utils/sms-record-query';

type FormValues = {
  range?: [Dayjs, Dayjs] | null;
  phone?: string;
  templateId?: string;
  status?: SmsMessageStatus;
  source?: SmsSource;
};

const statusOptions = Object.entries(SMS_MESSAGE_STATUS_LABELS).map(([value, label]) => ({ value, label }));
const sourceOptions = Object.entries(SMS_SOURCE_LABELS).map(([value, label]) => ({ value, label }));
const LINK_LABELS: Record<(typeof SMS_LINK_FILTERS)[number], string> = {
  callId: '通话',
  taskId: '任务',
  batchId: '批次',
};

const toFormValues = (f: SmsRecordFilters): FormValues => ({
  range: f.from && f.to ? [dayjs(f.from), dayjs(f.to)] : null,
  phone: f.phone ?? '',
  templateId: f.templateId,
  status: f.status,
  source: f.source,
});

/**
 * 查询 applies what is typed; the call, task or batch a link opened the list with stays (a chip
 * removes it), since the bar has no control for it.
 */
export function SmsRecordFilterBar({
  filters,
  templateOptions,
  templatesLoading,
  onSearch,
}: {
  filters: SmsRecordFilters;
  templateOptions: { value: string; label: string }[];
  templatesLoading: boolean;
  onSearch: (filters: SmsRecordFilters) => void;
}) {
  const [form] = Form.useForm<FormValues>();
  // biome-ignore lint/correctness/useExhaustiveDependencies: the form follows the applied filters (URL) only
  useEffect(() => form.setFieldsValue(toFormValues(filters)), [JSON.stringify(filters)]);

  const links = Object.fromEntries(SMS_LINK_FILTERS.filter((k) => filters[k]).map((k) => [k, filters[k]]));
  const submit = (values: FormValues) => {
    const [start, end] = values.range ?? [];
    const phone = values.phone?.trim();
    onSearch({
      ...(start && end ? { from: start.toISOString(), to: end.toISOString() } : {}),
      ...(phone ? { phone } : {}),
      ...(values.templateId ? { templateId: values.templateId } : {}),
      ...(values.status ? { status: values.status } : {}),
      ...(values.source ? { source: values.source } : {}),
      ...links,
    });
  };

  return (
    <div className="flex flex-col gap-3">
      <Form
        form={form}
        layout="inline"
        className="gap-y-3"
        onFinish={submit}
        initialValues={toFormValues(filters)}
      >
        <Form.Item name="range" label="时间">
          <DatePicker.RangePicker showTime aria-label="时间范围" />
        </Form.Item>
        <Form.Item
          name="phone"
          label="手机号"
          rules={[{ pattern: /^[\d\s+-]*$/, message: '手机号只能包含数字' }]}
          tooltip="11 位按号码查找，不足 11 位按开头的数字查找"
        >
          <Input aria-label="手机号" placeholder="手机号或号段" allowClear className="w-44" />
        </Form.Item>
        <Form.Item name="templateId" label="模板">
          <Select
            aria-label="模板"
            allowClear
            showSearch={{ optionFilterProp: 'label' }}
            placeholder="全部"
            loading={templatesLoading}
            options={templateOptions}
            className="min-w-40"
          />
        </Form.Item>
        <Form.Item name="status" label="状态">
          <Select
            aria-label="状态"
            allowClear
            placeholder="全部"
            options={statusOptions}
            className="min-w-32"
          />
        </Form.Item>
        <Form.Item name="source" label="来源">
          <Select
            aria-label="来源"
            allowClear
            placeholder="全部"
            options={sourceOptions}
            className="min-w-32"
          />
        </Form.Item>
        <Form.Item>
          <Space>
            <Button type="primary" htmlType="submit">
              查询
            </Button>
            <Button
              onClick={() => {
                form.resetFields();
                form.setFieldsValue({
                  range: null,
                  phone: '',
                  templateId: undefined,
                  status: undefined,
                  source: undefined,
                });
                onSearch({});
              }}
            >
              重置
            </Button>
          </Space>
        </Form.Item>
      </Form>
      {Object.keys(links).length > 0 && (
        <div className="flex flex-wrap items-center gap-2 text-sm text-gray-500">
          <span>仅显示：</span>
          {SMS_LINK_FILTERS.filter((key) => filters[key]).map((key) => (
            <Tag
              key={key}
              closable
              onClose={(event) => {
                event.preventDefault();
                const { [key]: _removed, ...rest } = filters;
                onSearch(rest);
              }}
            >
              {`${LINK_LABELS[key]} ${filters[key]}`}
            </Tag>
          ))}
        </div>
      )}
    </div>
  );
}
