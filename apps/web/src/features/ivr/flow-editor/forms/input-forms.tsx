import { DeleteOutlined, PlusOutlined } from '@ant-design/icons';
import { Button, Input, Select } from 'antd';
import {
  Field,
  type NodeFormProps,
  NumberField,
  newLocalId,
  SwitchField,
  TemplateField,
  TextField,
} from './fields';

// The nodes that wait for the caller: 按键菜单, 收号, 语音识别.

const REPEAT_KEYS = ['*', '#', '0', '9'];
/** The next key nobody uses yet, in the order callers expect: 1-9, then 0. */
function nextMenuKey(taken: string[]): string {
  return ['1', '2', '3', '4', '5', '6', '7', '8', '9', '0'].find((key) => !taken.includes(key)) ?? '';
}

function RetryFields({
  timeoutSec,
  maxRetries,
  errors,
  min,
  max,
  label,
  onTimeout,
  onRetries,
}: {
  timeoutSec: number;
  maxRetries: number;
  errors: Readonly<Record<string, string>>;
  min: number;
  max: number;
  label: string;
  onTimeout: (value: number) => void;
  onRetries: (value: number) => void;
}) {
  return (
    <div className="grid grid-cols-2 gap-3">
      <NumberField
        label={label}
        value={timeoutSec}
        onChange={onTimeout}
        error={errors.timeoutSec}
        min={min}
        max={max}
        unit="秒"
      />
      <NumberField
        label="重试次数"
        value={maxRetries}
        onChange={onRetries}
        error={errors.maxRetries}
        min={0}
        max={5}
        unit="次"
      />
    </div>
  );
}

export function MenuForm({ node, errors, set }: NodeFormProps<'menu'>) {
  const options = node.data.options;
  const change = (index: number, patch: Partial<(typeof options)[number]>, typingKey?: string) =>
    set({ options: options.map((option, i) => (i === index ? { ...option, ...patch } : option)) }, typingKey);
  return (
    <>
      <TemplateField
        label="菜单提示音"
        value={node.data.prompt}
        onChange={(prompt) => set({ prompt }, 'prompt')}
        error={errors.prompt}
        maxLength={1000}
        placeholder="例如：查询账单请按 1，故障报修请按 2，人工服务请按 0"
      />
      <Field label="按键选项" error={errors.options} extra="每个按键是一个出口，在画布上连到下一步">
        {() => (
          <div className="flex flex-col gap-2">
            {options.map((option, index) => (
              // biome-ignore lint/suspicious/noArrayIndexKey: options are identified by position while their key is typed
              <div key={index}>
                <div className="flex items-center gap-2">
                  <Input
                    aria-label={`按键 ${index + 1}`}
                    className="!w-20"
                    value={option.key}
                    maxLength={4}
                    status={errors[`options.${index}.key`] ? 'error' : undefined}
                    onChange={(event) =>
                      change(index, { key: event.target.value.trim() }, `options.${index}.key`)
                    }
                  />
                  <Input
                    aria-label={`选项说明 ${index + 1}`}
                    value={option.label}
                    maxLength={40}
                    placeholder="说明，例如：账单查询"
                    status={errors[`options.${index}.label`] ? 'error' : undefined}
                    onChange={(event) =>
                      change(index, { label: event.target.value }, `options.${index}.label`)
                    }
                  />
                  <Button
                    type="text"
                    aria-label={`删除按键 ${option.key || index + 1}`}
                    icon={<DeleteOutlined />}
                    onClick={() => set({ options: options.filter((_, i) => i !== index) })}
                  />
                </div>
                {(errors[`options.${index}.key`] ?? errors[`options.${index}.label`]) && (
                  <div className="mt-1 text-xs text-red-500">
                    {errors[`options.${index}.key`] ?? errors[`options.${index}.label`]}
                  </div>
                )}
              </div>
            ))}
            <Button
              icon={<PlusOutlined />}
              disabled={options.length >= 12}
              onClick={() =>
                set({ options: [...options, { key: nextMenuKey(options.map((o) => o.key)), label: '' }] })
              }
            >
              添加按键
            </Button>
          </div>
        )}
      </Field>
      <RetryFields
        label="按键等待时长"
        timeoutSec={node.data.timeoutSec}
        maxRetries={node.data.maxRetries}
        errors={errors}
        min={1}
        max={60}
        onTimeout={(timeoutSec) => set({ timeoutSec }, 'timeoutSec')}
        onRetries={(maxRetries) => set({ maxRetries }, 'maxRetries')}
      />
      <TemplateField
        label="按键错误提示"
        value={node.data.invalidPrompt}
        onChange={(invalidPrompt) => set({ invalidPrompt }, 'invalidPrompt')}
        error={errors.invalidPrompt}
        maxLength={1000}
        extra="重试次数用完后走「输入错误」出口"
      />
      <TemplateField
        label="超时提示"
        value={node.data.timeoutPrompt}
        onChange={(timeoutPrompt) => set({ timeoutPrompt }, 'timeoutPrompt')}
        error={errors.timeoutPrompt}
        maxLength={1000}
        extra="重试次数用完后走「超时」出口"
      />
      <Field label="重听键" error={errors.repeatKey} extra="按下后重播菜单，不计入重试">
        {(id) => (
          <Select
            id={id}
            value={node.data.repeatKey}
            onChange={(repeatKey: string) => set({ repeatKey })}
            options={[
              { value: '', label: '不设置' },
              ...REPEAT_KEYS.map((key) => ({ value: key, label: `${key} 键` })),
            ]}
          />
        )}
      </Field>
      <SwitchField
        label="允许按键打断提示音"
        checked={node.data.interruptible}
        onChange={(interruptible) => set({ interruptible })}
        extra="多位按键以 # 结束输入"
      />
    </>
  );
}

export function CollectForm({ node, errors, set }: NodeFormProps<'collect'>) {
  return (
    <>
      <TemplateField
        label="收号提示音"
        value={node.data.prompt}
        onChange={(prompt) => set({ prompt }, 'prompt')}
        error={errors.prompt}
        maxLength={1000}
        placeholder="例如：请输入您的 11 位手机号码，以井号键结束"
      />
      <TextField
        label="保存到变量"
        value={node.data.variable}
        onChange={(variable) => set({ variable }, 'variable')}
        error={errors.variable}
        maxLength={65}
        extra={`之后的节点用 {{${node.data.variable || '变量名'}}} 引用`}
      />
      <div className="grid grid-cols-2 gap-3">
        <NumberField
          label="最少位数"
          value={node.data.minDigits}
          onChange={(minDigits) => set({ minDigits }, 'minDigits')}
          error={errors.minDigits}
          min={1}
          max={32}
        />
        <NumberField
          label="最多位数"
          value={node.data.maxDigits}
          onChange={(maxDigits) => set({ maxDigits }, 'maxDigits')}
          error={errors.maxDigits}
          min={1}
          max={32}
        />
      </div>
      <SwitchField
        label="按 # 结束输入"
        checked={node.data.finishOnHash}
        onChange={(finishOnHash) => set({ finishOnHash })}
      />
      <TextField
        label="校验规则（正则表达式）"
        value={node.data.pattern}
        onChange={(pattern) => set({ pattern }, 'pattern')}
        error={errors.pattern}
        maxLength={200}
        placeholder="例如：^1[3-9]\d{9}$，留空不校验"
      />
      <RetryFields
        label="收号等待时长"
        timeoutSec={node.data.timeoutSec}
        maxRetries={node.data.maxRetries}
        errors={errors}
        min={1}
        max={60}
        onTimeout={(timeoutSec) => set({ timeoutSec }, 'timeoutSec')}
        onRetries={(maxRetries) => set({ maxRetries }, 'maxRetries')}
      />
      <TemplateField
        label="输入错误提示"
        value={node.data.invalidPrompt}
        onChange={(invalidPrompt) => set({ invalidPrompt }, 'invalidPrompt')}
        error={errors.invalidPrompt}
        maxLength={1000}
      />
      <TemplateField
        label="超时提示"
        value={node.data.timeoutPrompt}
        onChange={(timeoutPrompt) => set({ timeoutPrompt }, 'timeoutPrompt')}
        error={errors.timeoutPrompt}
        maxLength={1000}
      />
    </>
  );
}

export function SpeechForm({ node, errors, set }: NodeFormProps<'speech'>) {
  const intents = node.data.intents;
  const change = (index: number, patch: Partial<(typeof intents)[number]>, typingKey?: string) =>
    set({ intents: intents.map((intent, i) => (i === index ? { ...intent, ...patch } : intent)) }, typingKey);
  return (
    <>
      <TemplateField
        label="提问内容"
        value={node.data.prompt}
        onChange={(prompt) => set({ prompt }, 'prompt')}
        error={errors.prompt}
        maxLength={1000}
        placeholder="例如：请问您要办理什么业务？"
      />
      <TextField
        label="保存到变量"
        value={node.data.variable}
        onChange={(variable) => set({ variable }, 'variable')}
        error={errors.variable}
        maxLength={65}
        extra="来电者说的话存入这个变量"
      />
      <Field
        label="意图"
        error={errors.intents}
        extra="说的话包含任一关键词即匹配该意图；都不匹配走「未匹配」"
      >
        {() => (
          <div className="flex flex-col gap-2">
            {intents.map((intent, index) => (
              <div key={intent.id} className="rounded-md border border-gray-200 p-2">
                <div className="flex items-center gap-2">
                  <Input
                    aria-label={`意图名称 ${index + 1}`}
                    value={intent.name}
                    maxLength={20}
                    status={errors[`intents.${index}.name`] ? 'error' : undefined}
                    onChange={(event) => change(index, { name: event.target.value }, `intents.${index}.name`)}
                  />
                  <Button
                    type="text"
                    aria-label={`删除意图 ${intent.name || index + 1}`}
                    icon={<DeleteOutlined />}
                    onClick={() => set({ intents: intents.filter((_, i) => i !== index) })}
                  />
                </div>
                {errors[`intents.${index}.name`] && (
                  <div className="mt-1 text-xs text-red-500">{errors[`intents.${index}.name`]}</div>
                )}
                <Select
                  aria-label={`关键词 ${index + 1}`}
                  className="!mt-2 w-full"
                  mode="tags"
                  open={false}
                  suffixIcon={null}
                  tokenSeparators={[',', '，', '、', ' ']}
                  placeholder="输入关键词后回车"
                  value={intent.keywords}
                  onChange={(keywords: string[]) =>
                    change(index, {
                      keywords: [...new Set(keywords.map((word) => word.trim()).filter(Boolean))].slice(
                        0,
                        50,
                      ),
                    })
                  }
                />
              </div>
            ))}
            <Button
              icon={<PlusOutlined />}
              disabled={intents.length >= 20}
              onClick={() => {
                const id = newLocalId(
                  'i',
                  intents.map((i) => i.id),
                );
                set({ intents: [...intents, { id, name: `意图 ${intents.length + 1}`, keywords: [] }] });
              }}
            >
              添加意图
            </Button>
          </div>
        )}
      </Field>
      <RetryFields
        label="等待时长"
        timeoutSec={node.data.timeoutSec}
        maxRetries={node.data.maxRetries}
        errors={errors}
        min={1}
        max={60}
        onTimeout={(timeoutSec) => set({ timeoutSec }, 'timeoutSec')}
        onRetries={(maxRetries) => set({ maxRetries }, 'maxRetries')}
      />
      <TemplateField
        label="未识别提示"
        value={node.data.retryPrompt}
        onChange={(retryPrompt) => set({ retryPrompt }, 'retryPrompt')}
        error={errors.retryPrompt}
        maxLength={1000}
      />
    </>
  );
}
