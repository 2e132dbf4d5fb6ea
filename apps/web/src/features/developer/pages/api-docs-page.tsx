import { IDEMPOTENCY_KEY_HOURS } from '@callpilot/contracts';
import { Alert, Button, Empty, Input, Spin } from 'antd';
import { useMemo, useState } from 'react';
import { Link, useSearchParams } from 'react-router';
import { paths } from '@/config/paths';
import { cn } from '@/lib/utils';
import { useOpenApiDocument } from '../api/get-openapi-document';
import { ApiDocsOperation, MethodTag } from '../components/api-docs-operation';
import { DeveloperTabs } from '../components/developer-tabs';
import { API_KEY_ENV } from '../utils/code-samples';
import { pointerResolver } from '../utils/json-schema';
import { groupByTag, listOperations, matchesSearch, type OpenApiDocument } from '../utils/openapi';

function Guide() {
  const code = 'rounded bg-gray-100 px-1 font-mono text-xs';
  return (
    <section className="grid gap-4 rounded-lg border border-gray-200 bg-white p-6 text-sm text-gray-600 lg:grid-cols-2">
      <div>
        <h3 className="mb-1 text-sm font-semibold text-gray-900">认证</h3>
        <p className="m-0">
          每个请求带 <code className={code}>Authorization: Bearer cp_live_…</code>。密钥在{' '}
          <Link to={paths.developerKeys}>API 密钥</Link>{' '}
          页创建，项目由密钥决定，每个接口需要对应的权限。示例从环境变量{' '}
          <code className={code}>{API_KEY_ENV}</code> 读取密钥，请勿写进代码。
        </p>
      </div>
      <div>
        <h3 className="mb-1 text-sm font-semibold text-gray-900">限流</h3>
        <p className="m-0">
          每个密钥有每分钟请求上限。每个响应都带 <code className={code}>RateLimit</code> 和{' '}
          <code className={code}>RateLimit-Policy</code> 头；超出后返回 429 和{' '}
          <code className={code}>Retry-After</code>
          （秒），请等待后重试。
        </p>
      </div>
      <div>
        <h3 className="mb-1 text-sm font-semibold text-gray-900">幂等</h3>
        <p className="m-0">
          所有 POST 接口接受 <code className={code}>Idempotency-Key</code> 请求头（如
          UUID）。同一个键的首次应答保存 {IDEMPOTENCY_KEY_HOURS} 小时，重试时原样返回（带{' '}
          <code className={code}>Idempotent-Replayed: true</code>
          ），不会重复外呼或建任务；同一个键配不同的请求内容会被拒绝（422）。
        </p>
      </div>
      <div>
        <h3 className="mb-1 text-sm font-semibold text-gray-900">响应与错误</h3>
        <p className="m-0">
          与控制台相同的信封 <code className={code}>{'{ success, status, data, message, msg, error }'}</code>
          。失败时 <code className={code}>success</code> 为 false，<code className={code}>error</code>{' '}
          是中文说明（指出哪个字段不符合什么规则），并有机器可读的 <code className={code}>code</code>。
        </p>
      </div>
      <div>
        <h3 className="mb-1 text-sm font-semibold text-gray-900">分页</h3>
        <p className="m-0">
          通话列表使用游标分页：传 <code className={code}>limit</code>，应答中的{' '}
          <code className={code}>nextCursor</code> 作为下一页的 <code className={code}>cursor</code>
          ，为 null 时已到末尾。新增数据不会让翻页重复或遗漏。
        </p>
      </div>
      <div>
        <h3 className="mb-1 text-sm font-semibold text-gray-900">在线调试</h3>
        <p className="m-0">
          在 Swagger 中填入密钥即可直接发请求：
          <a href="/docs" target="_blank" rel="noreferrer" className="ml-1">
            在线调试（Swagger）
          </a>
        </p>
      </div>
    </section>
  );
}

function Reference({ document }: { document: OpenApiDocument }) {
  const [search, setSearch] = useSearchParams();
  const [filter, setFilter] = useState('');
  const resolve = useMemo(() => pointerResolver(document), [document]);
  const operations = useMemo(() => listOperations(document), [document]);
  const groups = useMemo(
    () =>
      groupByTag(
        document,
        operations.filter((operation) => matchesSearch(operation, filter)),
      ),
    [document, operations, filter],
  );
  const chosenKey = search.get('op');
  const chosen = operations.find((operation) => operation.key === chosenKey) ?? operations[0];

  if (operations.length === 0) {
    return <Empty description="接口文档中还没有接口" />;
  }
  return (
    <div className="flex flex-col gap-6 lg:flex-row">
      <nav aria-label="接口列表" className="flex shrink-0 flex-col gap-3 lg:w-80">
        <Input.Search
          aria-label="搜索接口"
          allowClear
          placeholder="搜索路径、名称或权限"
          onChange={(e) => setFilter(e.target.value)}
        />
        {groups.length === 0 && <p className="m-0 text-sm text-gray-500">没有匹配的接口</p>}
        {groups.map((group) => (
          <div key={group.tag}>
            <h3 className="mb-1 text-xs font-semibold uppercase text-gray-500">{group.tag}</h3>
            <ul className="m-0 flex list-none flex-col p-0">
              {group.operations.map((operation) => (
                <li key={operation.key}>
                  <button
                    type="button"
                    aria-current={operation.key === chosen?.key ? 'true' : undefined}
                    onClick={() => setSearch({ op: operation.key }, { replace: true })}
                    className={cn(
                      'flex w-full cursor-pointer flex-col gap-0.5 rounded-md border-0 bg-transparent px-2 py-1.5 text-left hover:bg-gray-50',
                      operation.key === chosen?.key && 'bg-[#4D8EFF]/10 hover:bg-[#4D8EFF]/10',
                    )}
                  >
                    <span className="flex items-center gap-2">
                      <MethodTag method={operation.method} />
                      <span className="truncate font-mono text-xs text-gray-800">{operation.path}</span>
                    </span>
                    {operation.summary && (
                      <span className="pl-1 text-xs text-gray-500">{operation.summary}</span>
                    )}
                  </button>
                </li>
              ))}
            </ul>
          </div>
        ))}
      </nav>
      <div className="min-w-0 flex-1 rounded-lg border border-gray-200 bg-white p-6">
        {chosen && <ApiDocsOperation operation={chosen} resolve={resolve} origin={window.location.origin} />}
      </div>
    </div>
  );
}

/** API 文档: the open API's reference, read from its own OpenAPI document, with code to copy. */
export function ApiDocsPage() {
  const document = useOpenApiDocument();
  return (
    <main className="flex flex-col gap-6 p-6">
      <h1 className="text-2xl font-semibold text-gray-900">开发者选项</h1>
      <DeveloperTabs />
      <header>
        <h2 className="text-lg font-semibold text-gray-900">
          开放接口 <span className="font-mono">/opendock/v1</span>
          {document.data?.info?.version && (
            <span className="ml-2 text-sm font-normal text-gray-500">版本 {document.data.info.version}</span>
          )}
        </h2>
        <p className="mt-1 text-sm text-gray-500">
          从你的 CRM、订单系统等程序发起外呼和任务、读取通话结果、管理知识库与免打扰名单。事件推送见
          Webhooks。
        </p>
      </header>
      <Guide />
      {document.isPending ? (
        <div className="flex justify-center py-16">
          <Spin />
        </div>
      ) : document.isError ? (
        <Alert
          type="error"
          showIcon
          title="接口文档加载失败"
          description={document.error.message}
          action={
            <Button size="small" onClick={() => void document.refetch()}>
              重试
            </Button>
          }
        />
      ) : (
        <Reference document={document.data} />
      )}
    </main>
  );
}
