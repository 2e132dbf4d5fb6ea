import { ArrowUpOutlined, DeleteOutlined, PlusOutlined } from '@ant-design/icons';
import {
  CONDITION_OPERATOR_LABELS,
  type ConditionOperator,
  type ConditionRule,
  type FlowNodeOf,
} from '@callpilot/contracts';
import { AutoComplete, Button, Checkbox, DatePicker, Dropdown, Input, Radio, Select, TimePicker } from 'antd';
import dayjs from 'dayjs';
import { TemplateInput } from '../template-input';
import { useFlowVariables } from '../use-flow-variables';
import { Field, type FieldErrors, type NodeFormProps, newLocalId } from './fields';

type Branch = FlowNodeOf<'condition'>['data']['branches'][number];
type Window = Extract<ConditionRule, { kind: 'business_hours' }>['windows'][number];

const RULE_KINDS: { kind: ConditionRule['kind']; label: string }[] = [
  { kind: 'business_hours', label: '工作时间' },
  { kind: 'time', label: '时间段' },
  { kind: 'weekday', label: '星期' },
  { kind: 'date_range', label: '日期范围' },
  { kind: 'caller', label: '来电号码' },
  { kind: 'variable', label: '变量' },
];
const KIND_LABELS = Object.fromEntries(RULE_KINDS.map((k) => [k.kind, k.label])) as Record<
  ConditionRule['kind'],
  string
>;
const WEEKDAYS = [1, 2, 3, 4, 5, 6, 7].map((day) => ({
  value: day,
  label: `周${'一二三四五六日'[day - 1]}`,
}));
const CALLER_OPS = [
  { value: 'prefix', label: '号码开头是' },
  { value: 'regex', label: '号码匹配正则' },
  { value: 'region', label: '号码归属地是' },
  { value: 'mobile', label: '是手机号' },
  { value: 'landline', label: '是固定电话' },
] as const;
const NO_VALUE_OPS: ConditionOperator[] = ['empty', 'not_empty'];

/** A rule of `kind` as it starts: the contracts' defaults, and today onwards for a date range. */
export function newRule(kind: ConditionRule['kind']): ConditionRule {
  switch (kind) {
    case 'variable':
      return { kind, variable: 'digits', op: 'eq', value: '' };
    case 'caller':
      return { kind, op: 'prefix', value: '' };
    case 'time':
      return { kind, start: '09:00', end: '18:00' };
    case 'weekday':
      return { kind, days: [1, 2, 3, 4, 5] };
    case 'business_hours':
      return { kind, windows: [{ days: [1, 2, 3, 4, 5], start: '09:00', end: '18:00' }], holidays: 'closed' };
    case 'date_range':
      return { kind, from: dayjs().format('YYYY-MM-DD'), to: dayjs().add(7, 'day').format('YYYY-MM-DD') };
  }
}

const asTime = (hhmm: string) => (/^\d{2}:\d{2}$/.test(hhmm) ? dayjs(`2000-01-01T${hhmm}`) : null);

function TimeInput({
  label,
  value,
  onChange,
}: {
  label: string;
  value: string;
  onChange: (value: string) => void;
}) {
  return (
    <TimePicker
      aria-label={label}
      format="HH:mm"
      minuteStep={5}
      allowClear={false}
      needConfirm={false}
      value={asTime(value)}
      onChange={(time) => {
        if (time) onChange(time.format('HH:mm'));
      }}
    />
  );
}

function WeekdayPicker({
  label,
  days,
  onChange,
}: {
  label: string;
  days: number[];
  onChange: (days: number[]) => void;
}) {
  return (
    <fieldset aria-label={label}>
      <Checkbox.Group
        options={WEEKDAYS}
        value={days}
        onChange={(next) => onChange([...(next as number[])].sort())}
      />
    </fieldset>
  );
}

function WindowEditor({
  window,
  label,
  onChange,
  onRemove,
}: {
  window: Window;
  label: string;
  onChange: (window: Window) => void;
  onRemove?: () => void;
}) {
  return (
    <div className="rounded border border-dashed border-gray-200 p-2">
      <WeekdayPicker
        label={`${label}星期`}
        days={window.days}
        onChange={(days) => onChange({ ...window, days })}
      />
      <div className="mt-2 flex items-center gap-2">
        <TimeInput
          label={`${label}开始时间`}
          value={window.start}
          onChange={(start) => onChange({ ...window, start })}
        />
        <span className="text-gray-400">至</span>
        <TimeInput
          label={`${label}结束时间`}
          value={window.end}
          onChange={(end) => onChange({ ...window, end })}
        />
        {onRemove && (
          <Button type="text" aria-label={`删除${label}`} icon={<DeleteOutlined />} onClick={onRemove} />
        )}
      </div>
    </div>
  );
}

function RuleEditor({
  rule,
  label,
  error,
  onChange,
}: {
  rule: ConditionRule;
  label: string;
  error?: string;
  /** `typingKey` when the change is a keystroke in a text. */
  onChange: (rule: ConditionRule, typingKey?: string) => void;
}) {
  const variables = useFlowVariables();
  switch (rule.kind) {
    case 'variable':
      return (
        <div className="flex flex-col gap-2">
          <div className="flex gap-2">
            <AutoComplete
              aria-label={`${label}变量`}
              className="min-w-0 flex-1"
              value={rule.variable}
              status={error ? 'error' : undefined}
              options={variables.map((v) => ({ value: v.name, label: `${v.name}（${v.label}）` }))}
              showSearch={{
                filterOption: (input, option) => String(option?.value ?? '').includes(input),
              }}
              onChange={(variable: string) => onChange({ ...rule, variable }, 'variable')}
            />
            <Select
              aria-label={`${label}比较方式`}
              className="!w-28"
              value={rule.op}
              onChange={(op: ConditionOperator) => onChange({ ...rule, op })}
              options={Object.entries(CONDITION_OPERATOR_LABELS).map(([value, text]) => ({
                value,
                label: text,
              }))}
            />
          </div>
          {!NO_VALUE_OPS.includes(rule.op) && (
            <TemplateInput
              value={rule.value}
              placeholder="比较值，可引用 {{变量}}"
              maxLength={200}
              onChange={(value) => onChange({ ...rule, value }, 'value')}
            />
          )}
        </div>
      );
    case 'caller':
      return (
        <div className="flex gap-2">
          <Select
            aria-label={`${label}号码条件`}
            className="!w-36"
            value={rule.op}
            onChange={(op: (typeof CALLER_OPS)[number]['value']) => onChange({ ...rule, op })}
            options={CALLER_OPS.map((op) => ({ value: op.value, label: op.label }))}
          />
          {rule.op !== 'mobile' && rule.op !== 'landline' && (
            <Input
              aria-label={`${label}号码值`}
              value={rule.value}
              maxLength={200}
              placeholder={
                rule.op === 'region'
                  ? '省或城市，例如：上海'
                  : rule.op === 'prefix'
                    ? '例如：021'
                    : '正则表达式'
              }
              onChange={(event) => onChange({ ...rule, value: event.target.value }, 'value')}
            />
          )}
        </div>
      );
    case 'time':
      return (
        <div className="flex items-center gap-2">
          <TimeInput
            label={`${label}开始时间`}
            value={rule.start}
            onChange={(start) => onChange({ ...rule, start })}
          />
          <span className="text-gray-400">至</span>
          <TimeInput
            label={`${label}结束时间`}
            value={rule.end}
            onChange={(end) => onChange({ ...rule, end })}
          />
        </div>
      );
    case 'weekday':
      return (
        <WeekdayPicker
          label={`${label}星期`}
          days={rule.days}
          onChange={(days) => onChange({ ...rule, days })}
        />
      );
    case 'business_hours':
      return (
        <div className="flex flex-col gap-2">
          {rule.windows.map((window, index) => (
            <WindowEditor
              // biome-ignore lint/suspicious/noArrayIndexKey: windows have no id; position is their identity
              key={index}
              window={window}
              label={`时段 ${index + 1}`}
              onChange={(next) =>
                onChange({ ...rule, windows: rule.windows.map((w, i) => (i === index ? next : w)) })
              }
              onRemove={
                rule.windows.length > 1
                  ? () => onChange({ ...rule, windows: rule.windows.filter((_, i) => i !== index) })
                  : undefined
              }
            />
          ))}
          <div className="flex items-center gap-2">
            <Button
              size="small"
              icon={<PlusOutlined />}
              disabled={rule.windows.length >= 14}
              onClick={() =>
                onChange({ ...rule, windows: [...rule.windows, { days: [6], start: '10:00', end: '16:00' }] })
              }
            >
              添加时段
            </Button>
            <Select
              aria-label={`${label}节假日`}
              size="small"
              className="min-w-0 flex-1"
              value={rule.holidays}
              onChange={(holidays: 'closed' | 'ignore') => onChange({ ...rule, holidays })}
              options={[
                { value: 'closed', label: '法定节假日休息，调休上班日照常' },
                { value: 'ignore', label: '不考虑节假日' },
              ]}
            />
          </div>
        </div>
      );
    case 'date_range':
      return (
        <DatePicker.RangePicker
          aria-label={`${label}日期范围`}
          allowClear={false}
          value={[dayjs(rule.from), dayjs(rule.to)]}
          onChange={(range) => {
            const [from, to] = range ?? [];
            if (from && to)
              onChange({ ...rule, from: from.format('YYYY-MM-DD'), to: to.format('YYYY-MM-DD') });
          }}
        />
      );
  }
}

function BranchEditor({
  branch,
  index,
  errors,
  onChange,
  onRemove,
  onMoveUp,
}: {
  branch: Branch;
  index: number;
  errors: FieldErrors;
  onChange: (branch: Branch, typingKey?: string) => void;
  onRemove: () => void;
  onMoveUp?: () => void;
}) {
  const prefix = `branches.${index}`;
  const setRule = (ruleIndex: number, rule: ConditionRule, typingKey?: string) =>
    onChange(
      { ...branch, rules: branch.rules.map((r, i) => (i === ruleIndex ? rule : r)) },
      typingKey && `rules.${ruleIndex}.${typingKey}`,
    );
  return (
    <section
      aria-label={`分支 ${branch.name || index + 1}`}
      className="rounded-md border border-gray-200 p-2"
    >
      <div className="flex items-center gap-1">
        <Input
          aria-label={`分支名称 ${index + 1}`}
          value={branch.name}
          maxLength={20}
          status={errors[`${prefix}.name`] ? 'error' : undefined}
          onChange={(event) => onChange({ ...branch, name: event.target.value }, 'name')}
        />
        {onMoveUp && (
          <Button
            type="text"
            aria-label={`上移分支 ${index + 1}`}
            icon={<ArrowUpOutlined />}
            onClick={onMoveUp}
          />
        )}
        <Button
          type="text"
          aria-label={`删除分支 ${index + 1}`}
          icon={<DeleteOutlined />}
          onClick={onRemove}
        />
      </div>
      {errors[`${prefix}.name`] && (
        <div className="mt-1 text-xs text-red-500">{errors[`${prefix}.name`]}</div>
      )}
      <Radio.Group
        className="!mt-2"
        size="small"
        value={branch.match}
        onChange={(event) => onChange({ ...branch, match: event.target.value })}
        options={[
          { value: 'all', label: '满足全部条件' },
          { value: 'any', label: '满足任一条件' },
        ]}
      />
      <ul className="mt-2 flex flex-col gap-2">
        {branch.rules.map((rule, ruleIndex) => {
          const label = `条件 ${ruleIndex + 1}`;
          const error = Object.entries(errors).find(([path]) =>
            path.startsWith(`${prefix}.rules.${ruleIndex}.`),
          )?.[1];
          return (
            // biome-ignore lint/suspicious/noArrayIndexKey: rules have no id; position is their identity
            <li key={ruleIndex} className="rounded bg-gray-50 p-2">
              <div className="mb-1 flex items-center justify-between text-xs text-gray-500">
                <span>
                  {label} · {KIND_LABELS[rule.kind]}
                </span>
                <Button
                  type="text"
                  size="small"
                  aria-label={`删除${label}`}
                  icon={<DeleteOutlined />}
                  onClick={() =>
                    onChange({ ...branch, rules: branch.rules.filter((_, i) => i !== ruleIndex) })
                  }
                />
              </div>
              <RuleEditor
                rule={rule}
                label={label}
                error={error}
                onChange={(next, typingKey) => setRule(ruleIndex, next, typingKey)}
              />
              {error && <div className="mt-1 text-xs text-red-500">{error}</div>}
            </li>
          );
        })}
      </ul>
      <Dropdown
        trigger={['click']}
        menu={{
          items: RULE_KINDS.map((k) => ({ key: k.kind, label: k.label })),
          onClick: ({ key }) =>
            onChange({ ...branch, rules: [...branch.rules, newRule(key as ConditionRule['kind'])] }),
        }}
      >
        <Button size="small" className="!mt-2" icon={<PlusOutlined />} disabled={branch.rules.length >= 20}>
          添加条件
        </Button>
      </Dropdown>
    </section>
  );
}

export function ConditionForm({ node, errors, set }: NodeFormProps<'condition'>) {
  const branches = node.data.branches;
  return (
    <Field
      label="分支"
      error={errors.branches}
      extra="从上到下判断，进入第一个满足的分支；都不满足走「其他」"
    >
      {() => (
        <div className="flex flex-col gap-3">
          {branches.map((branch, index) => (
            <BranchEditor
              key={branch.id}
              branch={branch}
              index={index}
              errors={errors}
              onChange={(next, typingKey) =>
                set(
                  { branches: branches.map((b, i) => (i === index ? next : b)) },
                  typingKey && `branches.${index}.${typingKey}`,
                )
              }
              onRemove={() => set({ branches: branches.filter((_, i) => i !== index) })}
              onMoveUp={
                index > 0
                  ? () => {
                      const next = branches.slice();
                      next.splice(index - 1, 2, branches[index] as Branch, branches[index - 1] as Branch);
                      set({ branches: next });
                    }
                  : undefined
              }
            />
          ))}
          <Button
            icon={<PlusOutlined />}
            disabled={branches.length >= 10}
            onClick={() =>
              set({
                branches: [
                  ...branches,
                  {
                    id: newLocalId(
                      'b',
                      branches.map((b) => b.id),
                    ),
                    name: `分支 ${branches.length + 1}`,
                    match: 'all',
                    rules: [],
                  },
                ],
              })
            }
          >
            添加分支
          </Button>
        </div>
      )}
    </Field>
  );
}
