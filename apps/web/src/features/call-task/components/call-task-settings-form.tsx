import DeleteOutlined from '@ant-design/icons/DeleteOutlined';
import PlusOutlined from '@ant-design/icons/PlusOutlined';
import {
  DEFAULT_RETRY_RULES,
  DEFAULT_WINDOWS,
  type RetryOutcome,
  type RetryRule,
  type TaskSettings,
  taskSettings,
} from '@callpilot/contracts';
import {
  Button,
  Checkbox,
  DatePicker,
  Form,
  Input,
  InputNumber,
  Select,
  Switch,
  Table,
  TimePicker,
} from 'antd';
import dayjs, { type Dayjs } from 'dayjs';
import { useEffect } from 'react';
import { isPublished, useAssistantOptions } from '@/entities/assistant/api/get-assistant-options';
import { useProjectNumbers } from '@/entities/project-number/api/get-project-numbers';
import { useBalanceLimit } from '@/lib/api/get-balance-limit';
import { usePublishedVersions } from '../api/get-task-assistants';
import { weekdayName } from '../utils/call-task-format';

/** The outcomes the form offers a rule for, in the order a user thinks of them. */
export const RETRY_OUTCOMES: { outcome: RetryOutcome; label: string }[] = [
  { outcome: 'no_answer', label: '未接听' },
  { outcome: 'busy', label: '忙线' },
  { outcome: 'powered_off', label: '关机' },
  { outcome: 'rejected', label: '拒接' },
  { outcome: 'failed', label: '呼叫失败' },
  { outcome: 'interrupted', label: '系统中断' },
];

const MAX_CONCURRENCY = 500;
const TIME_FORMAT = 'HH:mm';

type WindowValues = { days: number[]; time: [Dayjs, Dayjs] | null };
type RuleValues = { maxRetries: number | null; intervalMinutes: number | null };

export type SettingsFormValues = {
  name: string;
  assistantId?: string;
  assistantVersion?: number;
  callerNumbers: string[];
  dates: [Dayjs, Dayjs] | null;
  windows: WindowValues[];
  skipHolidays: boolean;
  concurrency: number | null;
  retryRules: Partial<Record<RetryOutcome, RuleValues>>;
  dailyCapPerNumber: number | null;
};

const dayOptions = [1, 2, 3, 4, 5, 6, 7].map((day) => ({ value: day, label: weekdayName(day) }));

const toTime = (hhmm: string) => dayjs(`2000-01-01 ${hhmm === '24:00' ? '23:59' : hhmm}`);

export function toFormValues(settings: TaskSettings | undefined, today = dayjs()): SettingsFormValues {
  const rules = { ...DEFAULT_RETRY_RULES, ...(settings?.retryRules ?? {}) };
  const retryRules: SettingsFormValues['retryRules'] = {};
  for (const { outcome } of RETRY_OUTCOMES) {
    // An outcome without a rule means no retry.
    const rule = settings ? settings.retryRules[outcome] : rules[outcome];
    retryRules[outcome] = { maxRetries: rule?.maxRetries ?? 0, intervalMinutes: rule?.intervalMinutes ?? 60 };
  }
  return {
    name: settings?.name ?? '',
    ...(settings?.assistantId ? { assistantId: settings.assistantId } : {}),
    ...(settings?.assistantVersion ? { assistantVersion: settings.assistantVersion } : {}),
    callerNumbers: settings?.callerNumbers ?? [],
    dates: settings
      ? [dayjs(settings.startDate), dayjs(settings.endDate)]
      : [today.startOf('day'), today.add(30, 'day').startOf('day')],
    windows: (settings?.windows ?? DEFAULT_WINDOWS).map((window) => ({
      days: window.days,
      time: [toTime(window.start), toTime(window.end)],
    })),
    skipHolidays: settings?.skipHolidays ?? true,
    concurrency: settings?.concurrency ?? 5,
    retryRules,
    dailyCapPerNumber: settings?.dailyCapPerNumber ?? 2,
  };
}

/**
 * The request the form stands for. Values the contract will refuse are passed through as they are
 * (NaN, empty strings), so the contract's own message names the field.
 */
export function toSettings(values: SettingsFormValues, previous?: TaskSettings): TaskSettings {
  const [start, end] = values.dates ?? [];
  const retryRules: Partial<Record<RetryOutcome, RetryRule>> = {};
  // Rules for outcomes this form does not show (空号, 语音信箱) are kept as they were.
  for (const [outcome, rule] of Object.entries(previous?.retryRules ?? {})) {
    if (!RETRY_OUTCOMES.some((shown) => shown.outcome === outcome) && rule) {
      retryRules[outcome as RetryOutcome] = rule;
    }
  }
  for (const { outcome } of RETRY_OUTCOMES) {
    const rule = values.retryRules[outcome];
    const maxRetries = rule?.maxRetries ?? 0;
    if (maxRetries > 0)
      retryRules[outcome] = { maxRetries, intervalMinutes: rule?.intervalMinutes ?? Number.NaN };
  }
  return {
    name: values.name ?? '',
    assistantId: values.assistantId ?? '',
    ...(values.assistantVersion ? { assistantVersion: values.assistantVersion } : {}),
    callerNumbers: values.callerNumbers ?? [],
    startDate: start ? start.format('YYYY-MM-DD') : '',
    endDate: end ? end.format('YYYY-MM-DD') : '',
    windows: (values.windows ?? []).map(({ days, time }) => ({
      days: [...(days ?? [])].sort((a, b) => a - b),
      start: time?.[0]?.format(TIME_FORMAT) ?? '',
      // The picker's last minute means "to the end of the day" (stored as 24:00).
      end: ((end) => (end === '23:59' ? '24:00' : end))(time?.[1]?.format(TIME_FORMAT) ?? ''),
    })),
    skipHolidays: values.skipHolidays ?? true,
    concurrency: values.concurrency ?? Number.NaN,
    retryRules,
    dailyCapPerNumber: values.dailyCapPerNumber ?? 0,
  };
}

/** Where a contract issue belongs on the form. */
function fieldOf(path: PropertyKey[]): (string | number)[] {
  const [head, ...rest] = path.map((part) => (typeof part === 'symbol' ? String(part) : part));
  if (head === 'startDate' || head === 'endDate') return ['dates'];
  if (head === 'windows' && rest.length >= 2)
    return ['windows', rest[0] as number, rest[1] === 'days' ? 'days' : 'time'];
  if (head === 'windows') return ['windows', 0, 'days'];
  return [head ?? 'name', ...rest].filter((part) => part !== undefined) as (string | number)[];
}

type Props = {
  projectId: string;
  initial?: TaskSettings;
  saving: boolean;
  submitText: string;
  /** The feature is not open for this project: the form shows, but cannot create. */
  submitDisabled?: boolean;
  onSubmit: (settings: TaskSettings) => void;
};

export function CallTaskSettingsForm({
  projectId,
  initial,
  saving,
  submitText,
  submitDisabled,
  onSubmit,
}: Props) {
  const [form] = Form.useForm<SettingsFormValues>();
  const assistants = useAssistantOptions(projectId);
  const numbers = useProjectNumbers(projectId);
  const limits = useBalanceLimit(projectId).data;
  const assistantId = Form.useWatch('assistantId', form) as string | undefined;
  const versions = usePublishedVersions(projectId, assistantId);

  const projectCap = limits?.hasBalance ? limits.concurrentCallout : null;
  const maxConcurrency = projectCap ?? MAX_CONCURRENCY;
  const published = (assistants.data ?? []).filter(isPublished);
  // A task keeps the assistant it was made with even if that was unpublished since; show it.
  const assistantOptions = published.map((assistant) => ({
    value: assistant.id,
    label: `${assistant.name}（v${assistant.publishedVersion}）`,
  }));

  // A newly chosen assistant starts on its latest published version.
  useEffect(() => {
    const latest = versions.data?.[0]?.version;
    const current = form.getFieldValue('assistantVersion') as number | undefined;
    if (latest && !versions.data?.some((version) => version.version === current)) {
      form.setFieldValue('assistantVersion', latest);
    }
  }, [versions.data, form]);

  const submit = (values: SettingsFormValues) => {
    const settings = toSettings(values, initial);
    const parsed = taskSettings.safeParse(settings);
    if (!parsed.success) {
      // Paths are built from the contract's issues, which antd's path types cannot follow.
      const fields = parsed.error.issues.map((issue) => ({
        name: fieldOf(issue.path),
        errors: [issue.message],
      }));
      form.setFields(fields as Parameters<typeof form.setFields>[0]);
      return;
    }
    if (projectCap !== null && parsed.data.concurrency > projectCap) {
      form.setFields([
        { name: ['concurrency'], errors: [`并发数不能超过项目呼出并发上限 ${projectCap} 路`] },
      ]);
      return;
    }
    onSubmit(parsed.data);
  };

  return (
    <Form<SettingsFormValues>
      form={form}
      layout="vertical"
      className="max-w-3xl"
      initialValues={toFormValues(initial)}
      onFinish={submit}
      // Enter in a date or time picker confirms the picker, not the whole form.
      onKeyDown={(event) => {
        if (event.key === 'Enter' && (event.target as HTMLElement).closest('.ant-picker'))
          event.preventDefault();
      }}
    >
      <Form.Item
        name="name"
        label="任务名称"
        rules={[{ required: true, whitespace: true, message: '请输入任务名称' }]}
      >
        <Input aria-label="任务名称" maxLength={50} showCount placeholder="如：3 月课程回访" />
      </Form.Item>
      <div className="grid grid-cols-1 gap-x-4 md:grid-cols-[2fr_1fr]">
        <Form.Item
          name="assistantId"
          label="小助手"
          rules={[{ required: true, message: '请选择小助手' }]}
          extra={
            assistants.isSuccess && published.length === 0
              ? '暂无已发布的小助手：请先在「智能小助手」中发布一个版本'
              : '只能选择已发布的小助手，任务使用所选版本，之后的修改不影响本任务'
          }
        >
          <Select
            aria-label="小助手"
            showSearch={{ optionFilterProp: 'label' }}
            placeholder="请选择已发布的小助手"
            loading={assistants.isPending}
            options={assistantOptions}
            onChange={() => form.setFieldValue('assistantVersion', undefined)}
          />
        </Form.Item>
        <Form.Item name="assistantVersion" label="版本">
          <Select
            aria-label="版本"
            placeholder="最新发布版本"
            disabled={!assistantId}
            loading={versions.isFetching}
            options={(versions.data ?? []).map((version) => ({
              value: version.version,
              label: `v${version.version}${version.note ? ` ${version.note}` : ''}`,
            }))}
          />
        </Form.Item>
      </div>
      <Form.Item
        name="callerNumbers"
        label="外显号码"
        extra="可多选，呼叫时轮流使用（休息中的号码暂不使用）；不选时，模拟通话使用默认号码"
      >
        <Select
          aria-label="外显号码"
          mode="multiple"
          allowClear
          placeholder={numbers.isSuccess && numbers.data.length === 0 ? '项目暂无外显号码' : '请选择外显号码'}
          loading={numbers.isPending}
          options={(numbers.data ?? [])
            .filter((number) => number.enabled)
            .map((number) => ({
              value: number.number,
              label: `${number.label ? `${number.number}（${number.label}）` : number.number}${number.restingSince ? ' · 休息中' : ''}`,
            }))}
        />
      </Form.Item>
      <Form.Item name="dates" label="起止日期" rules={[{ required: true, message: '请选择起止日期' }]}>
        <DatePicker.RangePicker aria-label="起止日期" />
      </Form.Item>

      <Form.Item label="呼叫时段" required extra="按北京时间；时段外任务自动等待，到点继续">
        <Form.List name="windows">
          {(fields, { add, remove }) => (
            <div className="flex flex-col gap-2">
              {fields.map((field, index) => (
                <div
                  key={field.key}
                  className="flex flex-wrap items-start gap-3 rounded border border-gray-200 p-3"
                >
                  <Form.Item
                    name={[field.name, 'days']}
                    className="!mb-0"
                    rules={[{ required: true, type: 'array', min: 1, message: '请至少选择一天' }]}
                  >
                    <Checkbox.Group aria-label={`时段 ${index + 1} 星期`} options={dayOptions} />
                  </Form.Item>
                  <Form.Item
                    name={[field.name, 'time']}
                    className="!mb-0"
                    rules={[{ required: true, message: '请选择时间' }]}
                  >
                    <TimePicker.RangePicker
                      aria-label={`时段 ${index + 1} 时间`}
                      format={TIME_FORMAT}
                      minuteStep={5}
                    />
                  </Form.Item>
                  <Button
                    type="text"
                    aria-label={`删除时段 ${index + 1}`}
                    icon={<DeleteOutlined />}
                    disabled={fields.length <= 1}
                    onClick={() => remove(field.name)}
                  />
                </div>
              ))}
              <Button
                type="dashed"
                icon={<PlusOutlined />}
                disabled={fields.length >= 10}
                onClick={() => add({ days: [1, 2, 3, 4, 5], time: [toTime('09:00'), toTime('18:00')] })}
              >
                添加时段
              </Button>
            </div>
          )}
        </Form.List>
      </Form.Item>
      <Form.Item
        name="skipHolidays"
        label="跳过法定节假日"
        valuePropName="checked"
        extra="法定节假日不呼叫，调休上班日照常呼叫"
      >
        <Switch aria-label="跳过法定节假日" />
      </Form.Item>
      <div className="grid grid-cols-1 gap-x-4 md:grid-cols-2">
        <Form.Item
          name="concurrency"
          label="并发数"
          rules={[{ required: true, message: '请输入并发数' }]}
          extra={
            projectCap !== null
              ? `项目呼出并发上限 ${projectCap} 路，所有进行中的任务共用`
              : `最多 ${MAX_CONCURRENCY} 路`
          }
        >
          <InputNumber aria-label="并发数" min={1} max={maxConcurrency} precision={0} suffix="路" />
        </Form.Item>
        <Form.Item
          name="dailyCapPerNumber"
          label="每号码每日上限"
          extra="同一号码每天在整个项目内最多被呼叫的次数，0 表示不限"
        >
          <InputNumber aria-label="每号码每日上限" min={0} max={20} precision={0} suffix="次" />
        </Form.Item>
      </div>
      <Form.Item
        label="重拨规则"
        extra="首次呼叫以该结果结束后，间隔指定分钟再次呼叫，重拨次数为 0 表示不重拨"
      >
        <Table
          size="small"
          pagination={false}
          rowKey="outcome"
          dataSource={RETRY_OUTCOMES}
          columns={[
            { title: '呼叫结果', dataIndex: 'label' },
            {
              title: '重拨次数',
              key: 'maxRetries',
              render: (_, { outcome, label }) => (
                <Form.Item name={['retryRules', outcome, 'maxRetries']} className="!mb-0">
                  <InputNumber aria-label={`${label}重拨次数`} min={0} max={5} precision={0} />
                </Form.Item>
              ),
            },
            {
              title: '间隔（分钟）',
              key: 'intervalMinutes',
              render: (_, { outcome, label }) => (
                <Form.Item name={['retryRules', outcome, 'intervalMinutes']} className="!mb-0">
                  <InputNumber aria-label={`${label}重拨间隔`} min={1} max={7 * 24 * 60} precision={0} />
                </Form.Item>
              ),
            },
          ]}
        />
      </Form.Item>
      <Form.Item>
        <Button type="primary" htmlType="submit" loading={saving} disabled={submitDisabled}>
          {submitText}
        </Button>
      </Form.Item>
    </Form>
  );
}
