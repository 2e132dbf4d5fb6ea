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
import { useEffect, useRef } from 'react';
import { useCallTags } from '../api/get-call-tags';
import type { CallFilters, GradeFilter } from '../utils/call-filters';

/** The filters a bar can show; a list picks the ones that make sense for it (a task's calls need no 小助手). */
export type CallFilterField =
  | 'range'
  | 'direction'
  | 'endReason'
  | 'intentGrade'
  | 'assistant'
  | 'number'
  | 'talkTime'
  | 'tags';

export type CallFilterOptions = { value: string; label: string }[];

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

function toFormValues(filters: CallFilters): FormValues {
  return {
    range: filters.range ? [dayjs(filters.range.from), dayjs(filters.range.to)] : null,
    direction: filters.direction,
    endReason: filters.endReason,
    intentGrade: filters.intentGrade,
    assistantId: filters.assistantId,
    number: filters.number ?? '',
    talkMin: filters.talkMin ?? null,
    talkMax: filters.talkMax ?? null,
    tags: filters.tags,
  };
}

function toFilters(values: FormValues, current: CallFilters): CallFilters {
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
    // A report's drill-down filters have no control here: a new search keeps them (chips clear them).
    ...(current.drill ? { drill: current.drill } : {}),
    // Sorting is the table's, not the filter bar's: a new search keeps it.
    ...(current.sort ? { sort: current.sort } : {}),
    ...(current.order ? { order: current.order } : {}),
  };
}

/** The multiple-choice filters: empty means all. */
const multiple = {
  mode: 'multiple',
  allowClear: true,
  maxTagCount: 'responsive',
  placeholder: '全部',
} as const;

/** What the form shows of the filters; a change of sort alone must not reset what the user is typing. */
const shownKey = ({ sort: _sort, order: _order, ...shown }: CallFilters) => JSON.stringify(shown);

/**
 * The one filter bar of every list of calls. The page owns the filters (in a list cache or its
 * URL); the bar shows `fields` of them, searches with the edited values and resets to `resetTo`.
 */
export function CallFilterBar({
  projectId,
  fields,
  filters,
  resetTo,
  onSearch,
  assistantOptions,
  assistantsLoading = false,
}: {
  projectId: string | undefined;
  fields: readonly CallFilterField[];
  filters: CallFilters;
  /** What 重置 returns to (sorting included: a reset list starts over). */
  resetTo: () => CallFilters;
  onSearch: (filters: CallFilters) => void;
  /** For the 小助手 field. */
  assistantOptions?: CallFilterOptions;
  assistantsLoading?: boolean;
}) {
  const [form] = Form.useForm<FormValues>();
  const shows = (field: CallFilterField) => fields.includes(field);
  const tags = useCallTags(shows('tags') ? projectId : undefined);
  const key = shownKey(filters);
  // What this bar itself searched for last: the form already shows it, and writing it back could
  // overwrite what the user started typing since (a picker's Enter searches mid-edit).
  const searched = useRef<string | null>(null);
  const search = (next: CallFilters) => {
    searched.current = shownKey(next);
    onSearch(next);
  };

  // The page may change the filters itself (back from a detail, a URL): show what is applied.
  // biome-ignore lint/correctness/useExhaustiveDependencies: the key is the identity of the shown filters
  useEffect(() => {
    if (key === searched.current) return;
    form.setFieldsValue(toFormValues(filters));
  }, [key, form]);

  const reset = () => {
    const next = resetTo();
    form.setFieldsValue(toFormValues(next));
    search(next);
  };

  return (
    <Form<FormValues>
      form={form}
      layout="inline"
      className="flex flex-wrap gap-y-3"
      initialValues={toFormValues(filters)}
      onFinish={(values) => search(toFilters(values, filters))}
    >
      {shows('range') && (
        <Form.Item name="range" label="时间">
          <DatePicker.RangePicker showTime aria-label="时间范围" />
        </Form.Item>
      )}
      {shows('direction') && (
        <Form.Item name="direction" label="方向">
          <Select
            aria-label="方向"
            allowClear
            placeholder="全部"
            options={directionOptions}
            className="!w-28"
          />
        </Form.Item>
      )}
      {shows('endReason') && (
        <Form.Item name="endReason" label="结束原因">
          <Select aria-label="结束原因" {...multiple} options={endReasonOptions} className="!w-56" />
        </Form.Item>
      )}
      {shows('intentGrade') && (
        <Form.Item name="intentGrade" label="意向等级">
          <Select aria-label="意向等级" {...multiple} options={gradeOptions} className="!w-56" />
        </Form.Item>
      )}
      {shows('assistant') && (
        <Form.Item name="assistantId" label="小助手">
          <Select
            aria-label="小助手"
            allowClear
            showSearch={{ optionFilterProp: 'label' }}
            placeholder="全部"
            loading={assistantsLoading}
            options={assistantOptions ?? []}
            className="!w-44"
          />
        </Form.Item>
      )}
      {shows('number') && (
        <Form.Item
          name="number"
          label="号码"
          rules={[{ pattern: /^[0-9+\-*#]*$/, message: '号码只能包含数字、+、-、*、#' }]}
        >
          <Input aria-label="号码" placeholder="主叫或被叫号码" allowClear maxLength={20} className="!w-40" />
        </Form.Item>
      )}
      {shows('talkTime') && (
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
      )}
      {shows('tags') && (
        <Form.Item name="tags" label="标签">
          <Select
            aria-label="标签"
            {...multiple}
            options={(tags.data ?? []).map((tag) => ({ value: tag, label: tag }))}
            className="!w-44"
          />
        </Form.Item>
      )}
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
