import { Table, type TableColumnsType, Tabs, Tag } from 'antd';
import { useMemo } from 'react';
import { curlSample, nodeSample, pythonSample, sampleRequest } from '../utils/code-samples';
import { exampleOf, type RefResolver, schemaFields, schemaHints, typeLabel } from '../utils/json-schema';
import { type ApiOperation, type ApiParameter, envelopeData, scopeLabel } from '../utils/openapi';
import { DeveloperCodeBlock } from './developer-code-block';
import { DeveloperFieldTable } from './developer-field-table';

export const METHOD_COLORS: Record<string, string> = {
  get: 'green',
  post: 'blue',
  put: 'orange',
  patch: 'gold',
  delete: 'red',
};

export function MethodTag({ method }: { method: string }) {
  return (
    <Tag color={METHOD_COLORS[method] ?? 'default'} className="!m-0 w-16 text-center font-mono">
      {method.toUpperCase()}
    </Tag>
  );
}

const PLACE_LABELS: Record<ApiParameter['in'], string> = {
  path: '路径',
  query: '查询',
  header: '请求头',
  cookie: 'Cookie',
};

function ParameterTable({ parameters, resolve }: { parameters: ApiParameter[]; resolve: RefResolver }) {
  const columns: TableColumnsType<ApiParameter> = [
    {
      title: '参数',
      dataIndex: 'name',
      render: (name: string, parameter) => (
        <span className="whitespace-nowrap font-mono text-xs">
          {name}
          {parameter.required && <span className="ml-1 text-[#FF5656]">*</span>}
        </span>
      ),
    },
    { title: '位置', dataIndex: 'in', render: (place: ApiParameter['in']) => PLACE_LABELS[place] },
    {
      title: '类型',
      key: 'type',
      render: (_, parameter) => (
        <span className="font-mono text-xs text-[#4D8EFF]">{typeLabel(parameter.schema, resolve)}</span>
      ),
    },
    {
      title: '说明',
      key: 'description',
      render: (_, parameter) => (
        <span className="text-sm">
          {parameter.description || <span className="text-gray-400">-</span>}
          {schemaHints(parameter.schema, resolve).map((hint) => (
            <Tag key={hint} className="!ml-2 !text-xs">
              {hint}
            </Tag>
          ))}
        </span>
      ),
    },
  ];
  return (
    <Table<ApiParameter>
      aria-label="请求参数"
      rowKey={(parameter) => `${parameter.in}:${parameter.name}`}
      size="small"
      columns={columns}
      dataSource={parameters}
      pagination={false}
    />
  );
}

const statusColor = (status: string) =>
  status.startsWith('2')
    ? 'success'
    : status.startsWith('4')
      ? 'orange'
      : status.startsWith('5')
        ? 'red'
        : 'default';

function Responses({ operation, resolve }: { operation: ApiOperation; resolve: RefResolver }) {
  const success = operation.responses.find((response) => response.status.startsWith('2'));
  const data = success ? envelopeData(success.schema, resolve) : null;
  const fields = data ? schemaFields(data, resolve) : [];
  return (
    <div className="flex flex-col gap-3">
      <ul className="m-0 flex list-none flex-col gap-1 p-0 text-sm">
        {operation.responses.map((response) => (
          <li key={response.status} className="flex items-center gap-2">
            <Tag color={statusColor(response.status)} className="!m-0 font-mono">
              {response.status}
            </Tag>
            <span className="text-gray-600">
              {response.description === 'Default Response' ? '' : response.description}
            </span>
          </li>
        ))}
      </ul>
      {success?.schema && (
        <div className="grid gap-4 xl:grid-cols-2">
          <div>
            <div className="mb-1 text-xs text-gray-500">data 字段</div>
            {fields.length > 0 ? (
              <DeveloperFieldTable fields={fields} label="响应字段" />
            ) : (
              <p className="m-0 font-mono text-xs text-[#4D8EFF]">{typeLabel(data ?? {}, resolve)}</p>
            )}
          </div>
          <div>
            <div className="mb-1 text-xs text-gray-500">响应示例</div>
            <DeveloperCodeBlock
              code={JSON.stringify(exampleOf(success.schema, resolve), null, 2)}
              label="响应示例"
              maxHeight={360}
            />
          </div>
        </div>
      )}
    </div>
  );
}

function Section({ title, children }: { title: string; children: React.ReactNode }) {
  return (
    <section className="flex flex-col gap-2">
      <h3 className="m-0 text-sm font-semibold text-gray-800">{title}</h3>
      {children}
    </section>
  );
}

/** One operation of the open API: what it does, what it needs, what it answers, and code to call it. */
export function ApiDocsOperation({
  operation,
  resolve,
  origin,
}: {
  operation: ApiOperation;
  resolve: RefResolver;
  origin: string;
}) {
  const samples = useMemo(() => {
    const request = sampleRequest(operation, resolve, origin);
    return { curl: curlSample(request), node: nodeSample(request), python: pythonSample(request) };
  }, [operation, resolve, origin]);
  const bodyFields = useMemo(
    () => (operation.body ? schemaFields(operation.body.schema, resolve) : []),
    [operation, resolve],
  );

  return (
    <article aria-label={operation.key} className="flex flex-col gap-5">
      <header className="flex flex-col gap-2">
        <div className="flex flex-wrap items-center gap-2">
          <MethodTag method={operation.method} />
          <code className="break-all font-mono text-base text-gray-900">{operation.path}</code>
          {operation.deprecated && <Tag color="default">已弃用</Tag>}
        </div>
        <h2 className="m-0 text-xl font-semibold text-gray-900">{operation.summary || operation.key}</h2>
        {operation.description && (
          <p className="m-0 whitespace-pre-line text-sm text-gray-600">{operation.description}</p>
        )}
        <div className="flex flex-wrap items-center gap-2 text-sm">
          <span className="text-gray-500">所需权限</span>
          {operation.isPublic ? (
            <Tag className="!m-0">无需密钥</Tag>
          ) : operation.scope ? (
            <>
              <Tag color="blue" className="!m-0 font-mono">
                {operation.scope}
              </Tag>
              <span className="text-gray-700">{scopeLabel(operation.scope)}</span>
            </>
          ) : (
            <Tag className="!m-0">任意有效密钥</Tag>
          )}
        </div>
      </header>

      {operation.parameters.length > 0 && (
        <Section title="请求参数">
          <ParameterTable parameters={operation.parameters} resolve={resolve} />
        </Section>
      )}

      {operation.body && (
        <Section title={`请求体（${operation.body.contentType}）`}>
          {operation.body.description && (
            <p className="m-0 text-sm text-gray-600">{operation.body.description}</p>
          )}
          <DeveloperFieldTable fields={bodyFields} label="请求体字段" />
        </Section>
      )}

      {operation.responses.length > 0 && (
        <Section title="响应">
          <Responses operation={operation} resolve={resolve} />
        </Section>
      )}

      <Section title="代码示例">
        <Tabs
          size="small"
          items={[
            {
              key: 'curl',
              label: 'curl',
              children: <DeveloperCodeBlock code={samples.curl} label="curl 示例" />,
            },
            {
              key: 'node',
              label: 'Node',
              children: <DeveloperCodeBlock code={samples.node} label="Node 示例" />,
            },
            {
              key: 'python',
              label: 'Python',
              children: <DeveloperCodeBlock code={samples.python} label="Python 示例" />,
            },
          ]}
        />
      </Section>
    </article>
  );
}
