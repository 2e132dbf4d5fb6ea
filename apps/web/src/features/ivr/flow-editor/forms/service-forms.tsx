import { DeleteOutlined, PlusOutlined } from '@ant-design/icons';
import { Button, Input, InputNumber, Select } from 'antd';
import { Link } from 'react-router';
import { paths } from '@/config/paths';
import { isPublished, useAssistantOptions } from '@/entities/assistant/api/get-assistant-options';
import { isPublishedFlow, useFlowOptions } from '@/features/ivr/api/get-flow-options';
import { selectCurrentProjectId, useUserStore } from '@/stores/user-store';
import { useFlowEditorStore } from '../store';
import { TemplateInput } from '../template-input';
import { Field, type NodeFormProps, NumberField, TemplateField } from './fields';

// The nodes that hand the call to something else: 转智能小助手, HTTP 请求, 子流程.

function RowError({ message }: { message?: string }) {
  return message ? <div className="mt-1 text-xs text-red-500">{message}</div> : null;
}

export function AssistantForm({ node, errors, set }: NodeFormProps<'assistant'>) {
  const projectId = useUserStore(selectCurrentProjectId) ?? '';
  const assistants = useAssistantOptions(projectId);
  const chosen = assistants.data?.find((a) => a.id === node.data.assistantId);
  const variables = node.data.variables;
  const change = (index: number, patch: Partial<(typeof variables)[number]>, typingKey?: string) =>
    set({ variables: variables.map((row, i) => (i === index ? { ...row, ...patch } : row)) }, typingKey);
  const latest = chosen?.publishedVersion ?? null;
  return (
    <>
      <Field
        label="智能小助手"
        error={errors.assistantId}
        extra={
          assistants.isSuccess && !assistants.data.some(isPublished) ? (
            <span>
              还没有已发布的小助手，<Link to={paths.assistantList}>去创建</Link>
            </span>
          ) : (
            '只能选择已发布的小助手'
          )
        }
      >
        {(id) => (
          <Select
            id={id}
            showSearch={{ optionFilterProp: 'label' }}
            placeholder="选择小助手"
            loading={assistants.isPending}
            value={node.data.assistantId || undefined}
            onChange={(assistantId: string) => set({ assistantId, version: null })}
            options={(assistants.data ?? []).map((a) => ({
              value: a.id,
              label: isPublished(a) ? `${a.name}（v${a.publishedVersion}）` : `${a.name}（未发布）`,
              disabled: !isPublished(a),
            }))}
          />
        )}
      </Field>
      <Field label="版本" error={errors.version}>
        {(id) => (
          <Select
            id={id}
            value={node.data.version ?? 0}
            disabled={!node.data.assistantId}
            onChange={(version: number) => set({ version: version === 0 ? null : version })}
            options={[
              { value: 0, label: '跟随线上版本（通话时的已发布版本）' },
              ...Array.from({ length: latest ?? node.data.version ?? 0 }, (_, i) => (latest ?? 0) - i)
                .filter((v) => v > 0)
                .map((v) => ({ value: v, label: `固定 v${v}` })),
            ]}
          />
        )}
      </Field>
      <Field
        label="传给小助手的变量"
        error={errors.variables}
        extra="小助手的变量名，值可引用流程变量，例如 {{account_balance}}"
      >
        {() => (
          <div className="flex flex-col gap-2">
            {variables.map((row, index) => (
              // biome-ignore lint/suspicious/noArrayIndexKey: rows have no id; position is their identity
              <div key={index} className="rounded-md border border-gray-200 p-2">
                <div className="flex items-center gap-2">
                  <Input
                    aria-label={`小助手变量名 ${index + 1}`}
                    value={row.name}
                    maxLength={20}
                    status={errors[`variables.${index}.name`] ? 'error' : undefined}
                    placeholder="变量名"
                    onChange={(event) =>
                      change(index, { name: event.target.value }, `variables.${index}.name`)
                    }
                  />
                  <Button
                    type="text"
                    aria-label={`删除小助手变量 ${index + 1}`}
                    icon={<DeleteOutlined />}
                    onClick={() => set({ variables: variables.filter((_, i) => i !== index) })}
                  />
                </div>
                <RowError message={errors[`variables.${index}.name`]} />
                <div className="mt-2">
                  <TemplateInput
                    value={row.value}
                    maxLength={200}
                    placeholder="值，例如 {{caller}}"
                    onChange={(value) => change(index, { value }, `variables.${index}.value`)}
                  />
                </div>
              </div>
            ))}
            <Button
              icon={<PlusOutlined />}
              disabled={variables.length >= 30}
              onClick={() => set({ variables: [...variables, { name: '', value: '' }] })}
            >
              添加变量
            </Button>
          </div>
        )}
      </Field>
    </>
  );
}

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;

export function HttpForm({ node, errors, set }: NodeFormProps<'http'>) {
  const { headers, mappings } = node.data;
  return (
    <>
      <Field label="请求" error={errors.method ?? errors.url}>
        {(id) => (
          <div className="flex items-start gap-2">
            <Select
              aria-label="请求方法"
              className="!w-24 shrink-0"
              value={node.data.method}
              onChange={(method: (typeof METHODS)[number]) => set({ method })}
              options={METHODS.map((m) => ({ value: m, label: m }))}
            />
            <div className="min-w-0 flex-1">
              <TemplateInput
                id={id}
                value={node.data.url}
                maxLength={1000}
                placeholder="https://api.example.com/users/{{caller}}"
                invalid={Boolean(errors.url)}
                onChange={(url) => set({ url }, 'url')}
              />
            </div>
          </div>
        )}
      </Field>
      <Field label="请求头" error={errors.headers}>
        {() => (
          <div className="flex flex-col gap-2">
            {headers.map((header, index) => (
              // biome-ignore lint/suspicious/noArrayIndexKey: rows have no id; position is their identity
              <div key={index} className="rounded-md border border-gray-200 p-2">
                <div className="flex items-center gap-2">
                  <Input
                    aria-label={`请求头名称 ${index + 1}`}
                    value={header.name}
                    maxLength={100}
                    placeholder="例如：Authorization"
                    status={errors[`headers.${index}.name`] ? 'error' : undefined}
                    onChange={(event) =>
                      set(
                        {
                          headers: headers.map((h, i) =>
                            i === index ? { ...h, name: event.target.value } : h,
                          ),
                        },
                        `headers.${index}.name`,
                      )
                    }
                  />
                  <Button
                    type="text"
                    aria-label={`删除请求头 ${index + 1}`}
                    icon={<DeleteOutlined />}
                    onClick={() => set({ headers: headers.filter((_, i) => i !== index) })}
                  />
                </div>
                <RowError message={errors[`headers.${index}.name`]} />
                <div className="mt-2">
                  <TemplateInput
                    value={header.value}
                    maxLength={1000}
                    placeholder="值"
                    onChange={(value) =>
                      set(
                        { headers: headers.map((h, i) => (i === index ? { ...h, value } : h)) },
                        `headers.${index}.value`,
                      )
                    }
                  />
                </div>
              </div>
            ))}
            <Button
              icon={<PlusOutlined />}
              disabled={headers.length >= 20}
              onClick={() => set({ headers: [...headers, { name: '', value: '' }] })}
            >
              添加请求头
            </Button>
          </div>
        )}
      </Field>
      {/* Shown for GET too while a body is left over, so the rule that refuses it can be acted on. */}
      {(node.data.method !== 'GET' || node.data.body !== '') && (
        <TemplateField
          label="请求体（JSON）"
          value={node.data.body}
          onChange={(body) => set({ body }, 'body')}
          error={errors.body}
          maxLength={5000}
          placeholder={'{"phone": "{{caller}}"}'}
          extra="变量按 JSON 字符串插入"
        />
      )}
      <div className="grid grid-cols-2 gap-3">
        <Field label="超时" error={errors.timeoutMs}>
          {(id) => (
            <InputNumber
              id={id}
              className="!w-full"
              min={100}
              max={10_000}
              step={500}
              precision={0}
              suffix="毫秒"
              value={node.data.timeoutMs}
              onChange={(timeoutMs) => {
                if (typeof timeoutMs === 'number') set({ timeoutMs }, 'timeoutMs');
              }}
            />
          )}
        </Field>
        <NumberField
          label="失败重试"
          value={node.data.retries}
          onChange={(retries) => set({ retries }, 'retries')}
          error={errors.retries}
          min={0}
          max={3}
          unit="次"
        />
      </div>
      <Field
        label="响应字段存入变量"
        error={errors.mappings}
        extra="路径按 JSON 逐级取值，例如 data.balance、items.0.name"
      >
        {() => (
          <div className="flex flex-col gap-2">
            {mappings.map((mapping, index) => (
              // biome-ignore lint/suspicious/noArrayIndexKey: rows have no id; position is their identity
              <div key={index}>
                <div className="flex items-center gap-2">
                  <Input
                    aria-label={`响应字段路径 ${index + 1}`}
                    value={mapping.path}
                    maxLength={200}
                    placeholder="data.balance"
                    status={errors[`mappings.${index}.path`] ? 'error' : undefined}
                    onChange={(event) =>
                      set(
                        {
                          mappings: mappings.map((m, i) =>
                            i === index ? { ...m, path: event.target.value } : m,
                          ),
                        },
                        `mappings.${index}.path`,
                      )
                    }
                  />
                  <span className="text-gray-400">→</span>
                  <Input
                    aria-label={`存入变量 ${index + 1}`}
                    value={mapping.variable}
                    maxLength={65}
                    placeholder="变量名"
                    status={errors[`mappings.${index}.variable`] ? 'error' : undefined}
                    onChange={(event) =>
                      set(
                        {
                          mappings: mappings.map((m, i) =>
                            i === index ? { ...m, variable: event.target.value } : m,
                          ),
                        },
                        `mappings.${index}.variable`,
                      )
                    }
                  />
                  <Button
                    type="text"
                    aria-label={`删除字段映射 ${index + 1}`}
                    icon={<DeleteOutlined />}
                    onClick={() => set({ mappings: mappings.filter((_, i) => i !== index) })}
                  />
                </div>
                <RowError
                  message={errors[`mappings.${index}.path`] ?? errors[`mappings.${index}.variable`]}
                />
              </div>
            ))}
            <Button
              icon={<PlusOutlined />}
              disabled={mappings.length >= 30}
              onClick={() =>
                set({ mappings: [...mappings, { path: '', variable: `field${mappings.length + 1}` }] })
              }
            >
              添加字段
            </Button>
          </div>
        )}
      </Field>
      <Field
        label="默认结果（JSON，可选）"
        error={errors.defaultResult}
        extra="接口失败时按这段 JSON 取值，后面的节点仍有变量可用"
      >
        {(id) => (
          <Input.TextArea
            id={id}
            value={node.data.defaultResult}
            maxLength={2000}
            autoSize={{ minRows: 2, maxRows: 6 }}
            placeholder={'{"data": {"balance": "0"}}'}
            status={errors.defaultResult ? 'error' : undefined}
            onChange={(event) => set({ defaultResult: event.target.value }, 'defaultResult')}
          />
        )}
      </Field>
    </>
  );
}

export function SubflowForm({ node, errors, set }: NodeFormProps<'subflow'>) {
  const projectId = useUserStore(selectCurrentProjectId) ?? '';
  const flowId = useFlowEditorStore((s) => s.flowId);
  const flows = useFlowOptions(projectId);
  const others = (flows.data ?? []).filter((flow) => flow.id !== flowId);
  return (
    <Field label="子流程" error={errors.flowId} extra="运行所选流程的已发布版本，结束后回到这里继续">
      {(id) => (
        <Select
          id={id}
          showSearch={{ optionFilterProp: 'label' }}
          placeholder="选择流程"
          loading={flows.isPending}
          value={node.data.flowId || undefined}
          onChange={(chosen: string) => set({ flowId: chosen })}
          notFoundContent="没有其他流程"
          options={others.map((flow) => ({
            value: flow.id,
            label: isPublishedFlow(flow)
              ? `${flow.name}（v${flow.publishedVersion}）`
              : `${flow.name}（未发布）`,
            disabled: !isPublishedFlow(flow),
          }))}
        />
      )}
    </Field>
  );
}
