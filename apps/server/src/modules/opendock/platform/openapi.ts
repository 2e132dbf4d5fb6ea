import {
  API_KEY_PREFIX,
  API_KEY_RESOURCE_LABELS,
  API_REQUEST_LOG_DAYS,
  type ApiKeyResource,
  IDEMPOTENCY_KEY_HOURS,
} from '@callpilot/contracts';
import { OPENDOCK_PREFIX } from '../../../plugins/api-key-auth';
import { idempotencyMessages } from './idempotency';

/** What the document needs to know of an open-API route beyond its schema (from its config). */
export interface OpendockRouteInfo {
  public: boolean;
  anyScope: boolean;
  scope: { resource: ApiKeyResource; access: 'read' | 'write' } | null;
}

/** `GET /opendock/v1/calls/{callId}`: how the routes are keyed, in the document's path syntax. */
export const routeKey = (method: string, url: string) =>
  `${method.toUpperCase()} ${url.replace(/:([A-Za-z0-9_]+)/g, '{$1}')}`;

export const OPENDOCK_DOCUMENT_URL = `${OPENDOCK_PREFIX}/openapi.json`;
export const SECURITY_SCHEME = 'ApiKeyAuth';

type Json = Record<string, unknown>;
interface Operation extends Json {
  description?: string;
  parameters?: Json[];
  requestBody?: { content?: Record<string, { schema?: Json }> };
  responses?: Record<string, Json>;
}
interface Document extends Json {
  paths?: Record<string, Record<string, Operation>>;
  components?: { schemas?: Record<string, Json>; [name: string]: unknown };
}

const METHODS = ['get', 'put', 'post', 'delete', 'patch'];
const errorContent = { 'application/json': { schema: { $ref: '#/components/schemas/ErrorEnvelope' } } };
const rateLimitHeaders = {
  RateLimit: { $ref: '#/components/headers/RateLimit' },
  'RateLimit-Policy': { $ref: '#/components/headers/RateLimitPolicy' },
};

const DESCRIPTION = `客户自有系统（CRM、订单系统等）调用的开放接口：发起通话与呼出任务、读取结果。

**认证**：每个请求携带 \`Authorization: Bearer <API 密钥>\`。API 密钥在控制台「开发者选项 → API 密钥」创建，以 \`${API_KEY_PREFIX}\` 开头，只在创建时显示一次；项目由密钥决定。控制台登录令牌不能用于本接口，API 密钥也不能用于控制台接口。

**权限**：密钥按资源授予只读或读写权限，每个接口注明所需权限（\`x-scope\`，如 \`calls:write\`）；权限不足返回 403。\`GET /opendock/v1/me\` 可用于检查密钥本身。

**应答**：与控制台接口相同的统一信封 \`{ success, status, data, message, msg, error }\`；失败时 \`message\` 为中文说明，\`code\` 供程序判断。

**频率限制**：每个密钥每分钟的请求数有上限（创建密钥时设置）。每个应答都带 \`RateLimit-Policy: <上限>;w=60\` 与 \`RateLimit: limit=<上限>, remaining=<剩余>, reset=<秒>\`（以及旧版草案的 \`RateLimit-Limit\`、\`RateLimit-Remaining\`、\`RateLimit-Reset\`）；超出返回 429 与 \`Retry-After\`。计数对整个部署生效：多个 API 进程共享同一个计数。

**幂等**：所有 POST 接受 \`Idempotency-Key\` 请求头（1 到 255 个可打印 ASCII 字符，建议用 UUID）。首次应答保存 ${IDEMPOTENCY_KEY_HOURS} 小时，重复请求原样返回该应答并带 \`Idempotent-Replayed: true\`；同一键用于内容不同的请求返回 422，首次请求仍在处理时返回 409；5xx 应答不保存，可用同一键重试。

**请求日志**：每个密钥的请求（时间、方法、路径、状态、耗时）保留 ${API_REQUEST_LOG_DAYS} 天，可在控制台查看。

**事件**：通话与任务的状态变化通过 Webhook 推送（控制台「开发者选项 → Webhooks」），无需轮询。

**短信**：\`POST /opendock/v1/sms\` 用已通过审核的签名与模板发送短信，\`GET /opendock/v1/sms/{smsId}\` 查询状态；免打扰、每号码每日上限与推广短信的发送时段与控制台相同。`;

/**
 * The open API's own OpenAPI 3.1 document, cut from the whole generated one (app.swagger(), built
 * from the contracts): only /opendock/v1 operations and the components they reference, each
 * operation with its needed scope (`x-scope`), the Idempotency-Key header on POSTs, the 401/403/429
 * answers every key-checked route can give, and code samples (curl, Node, Python).
 */
export function buildOpendockDocument(
  full: Document,
  routes: ReadonlyMap<string, OpendockRouteInfo>,
  version: string,
): Document {
  const paths: Record<string, Record<string, Operation>> = {};
  for (const [path, item] of Object.entries(full.paths ?? {})) {
    if (!path.startsWith(`${OPENDOCK_PREFIX}/`) || path === OPENDOCK_DOCUMENT_URL) continue;
    for (const [method, source] of Object.entries(item)) {
      if (!METHODS.includes(method)) continue;
      const info = routes.get(routeKey(method, path));
      const op = structuredClone(source);
      if (!info?.public) decorateGuarded(op, method, info);
      addCodeSamples(op, method, path, full, !info?.public);
      paths[path] ??= {};
      paths[path][method] = op;
    }
  }
  return {
    openapi: '3.1.0',
    info: { title: '智能语音外呼平台开放接口 /opendock/v1', description: DESCRIPTION, version },
    servers: [{ url: '/' }],
    paths,
    components: {
      securitySchemes: {
        [SECURITY_SCHEME]: {
          type: 'http',
          scheme: 'bearer',
          bearerFormat: `${API_KEY_PREFIX}…`,
          description: '控制台「开发者选项 → API 密钥」创建的密钥',
        },
      },
      headers: {
        RateLimit: {
          description: '该密钥当前窗口的额度：limit=上限, remaining=剩余次数, reset=距重置秒数',
          schema: { type: 'string', examples: ['limit=600, remaining=599, reset=60'] },
        },
        RateLimitPolicy: {
          description: '该密钥的频率策略：<每窗口上限>;w=<窗口秒数>',
          schema: { type: 'string', examples: ['600;w=60'] },
        },
        RetryAfter: { description: '多少秒后可以重试', schema: { type: 'integer' } },
      },
      schemas: referencedSchemas(paths, full.components?.schemas ?? {}),
    },
  };
}

function decorateGuarded(op: Operation, method: string, info: OpendockRouteInfo | undefined) {
  op.security = [{ [SECURITY_SCHEME]: [] }];
  const scope = info?.scope;
  op['x-scope'] = info?.anyScope ? 'any' : scope ? `${scope.resource}:${scope.access}` : 'none';
  const needs = info?.anyScope
    ? '任意有效的 API 密钥'
    : scope
      ? `\`${scope.resource}:${scope.access}\`（${API_KEY_RESOURCE_LABELS[scope.resource]} · ${scope.access === 'write' ? '读写' : '只读'}）`
      : '未声明（总是返回 403）';
  // The route's own words, before the scope and samples are appended for swagger-ui (which shows only
  // `description`): the console's API 文档 shows those parts itself.
  op['x-description'] = op.description ?? '';
  op.description = `${op.description ? `${op.description}\n\n` : ''}**所需权限**：${needs}`;
  if (method === 'post') {
    op.parameters = [
      ...(op.parameters ?? []),
      {
        name: 'Idempotency-Key',
        in: 'header',
        required: false,
        description: `可选。相同的键在 ${IDEMPOTENCY_KEY_HOURS} 小时内重放首次应答；内容不同的请求：${idempotencyMessages.mismatch}`,
        schema: { type: 'string', minLength: 1, maxLength: 255 },
      },
    ];
  }
  op.responses ??= {};
  const responses = op.responses;
  for (const [status, response] of Object.entries(responses)) {
    if (/^2\d\d$/.test(status)) response.headers = { ...(response.headers as Json), ...rateLimitHeaders };
  }
  // The routes' own 401/403 entries carry fastify's "Default Response": say what they mean.
  responses['401'] = { description: '缺少、无效、已吊销或已过期的 API 密钥', content: errorContent };
  responses['403'] = {
    description: '密钥没有该接口所需的权限、来源 IP 不在白名单中，或项目已停用',
    content: errorContent,
  };
  responses['429'] = {
    description: '超出该密钥每分钟的请求上限',
    headers: { ...rateLimitHeaders, 'Retry-After': { $ref: '#/components/headers/RetryAfter' } },
    content: errorContent,
  };
}

/** Every schema the kept operations reach through $ref, transitively. */
function referencedSchemas(paths: object, all: Record<string, Json>): Record<string, Json> {
  const kept: Record<string, Json> = {};
  const visit = (node: unknown) => {
    if (Array.isArray(node)) {
      for (const item of node) visit(item);
      return;
    }
    if (!node || typeof node !== 'object') return;
    for (const [key, value] of Object.entries(node)) {
      if (key === '$ref' && typeof value === 'string' && value.startsWith('#/components/schemas/')) {
        const name = value.slice('#/components/schemas/'.length);
        if (!(name in kept) && all[name]) {
          kept[name] = all[name];
          visit(all[name]);
        }
      } else visit(value);
    }
  };
  visit(paths);
  // ErrorEnvelope is named by every added 401/403/429 answer.
  if (all.ErrorEnvelope) kept.ErrorEnvelope ??= all.ErrorEnvelope;
  return kept;
}

// ---------------------------------------------------------------------------------------------
// Code samples
// ---------------------------------------------------------------------------------------------

/** A readable example value of a JSON schema: its example, default, first enum member, or a stand-in. */
export function exampleOf(
  schema: Json | undefined,
  schemas: Record<string, Json>,
  depth = 0,
  name = '',
): unknown {
  if (!schema || depth > 8) return null;
  if (typeof schema.$ref === 'string') {
    return exampleOf(schemas[schema.$ref.split('/').pop()!], schemas, depth + 1, name);
  }
  if (Array.isArray(schema.examples) && schema.examples.length > 0) return schema.examples[0];
  if ('example' in schema) return schema.example;
  if ('default' in schema) return schema.default;
  if ('const' in schema) return schema.const;
  if (Array.isArray(schema.enum)) return schema.enum[0];
  const variants = (schema.anyOf ?? schema.oneOf) as Json[] | undefined;
  if (variants) {
    const first = variants.find((v) => v.type !== 'null') ?? variants[0];
    return exampleOf(first, schemas, depth + 1, name);
  }
  if (Array.isArray(schema.allOf)) {
    return Object.assign(
      {},
      ...schema.allOf.map((part) => exampleOf(part as Json, schemas, depth + 1, name)),
    );
  }
  const type = Array.isArray(schema.type) ? schema.type.find((t) => t !== 'null') : schema.type;
  switch (type) {
    case 'object': {
      const properties = (schema.properties ?? {}) as Record<string, Json>;
      const required = (schema.required ?? []) as string[];
      const names = required.length > 0 ? required : Object.keys(properties);
      return Object.fromEntries(
        names.map((key) => [key, exampleOf(properties[key], schemas, depth + 1, key)]),
      );
    }
    case 'array':
      return [exampleOf(schema.items as Json | undefined, schemas, depth + 1, name)];
    case 'integer':
    case 'number':
      return typeof schema.minimum === 'number' ? schema.minimum : 1;
    case 'boolean':
      return true;
    case 'string':
      if (schema.format === 'date-time') return '2030-01-01T09:00:00+08:00';
      if (schema.format === 'date') return '2030-01-01';
      if (schema.format === 'email') return 'user@example.com';
      if (schema.format === 'uri' || /url$/i.test(name)) return 'https://example.com/hook';
      // Contracts may give examples (.meta({ examples })); until then a few fields by their name.
      if (/phone/i.test(name)) return '13800138000';
      if (/id$/i.test(name)) return placeholder(name);
      return 'string';
    default:
      return null;
  }
}

/** `{callId}` → `CALL_ID`: a placeholder a reader sees at once must be replaced. */
const placeholder = (name: string) => name.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toUpperCase();

/** JSON as a Python literal (True/False/None), indented like json.dumps(indent=4). */
function pythonLiteral(value: unknown, indent = 0): string {
  const pad = ' '.repeat(indent + 4);
  const end = ' '.repeat(indent);
  if (value === null || value === undefined) return 'None';
  if (value === true) return 'True';
  if (value === false) return 'False';
  if (Array.isArray(value)) {
    if (value.length === 0) return '[]';
    return `[\n${value.map((v) => pad + pythonLiteral(v, indent + 4)).join(',\n')},\n${end}]`;
  }
  if (typeof value === 'object') {
    const entries = Object.entries(value);
    if (entries.length === 0) return '{}';
    const lines = entries.map(([k, v]) => `${pad}${JSON.stringify(k)}: ${pythonLiteral(v, indent + 4)}`);
    return `{\n${lines.join(',\n')},\n${end}}`;
  }
  return JSON.stringify(value);
}

function addCodeSamples(op: Operation, method: string, path: string, full: Document, guarded: boolean) {
  const schemas = full.components?.schemas ?? {};
  const M = method.toUpperCase();
  const query = (op.parameters ?? [])
    .filter((p) => p.in === 'query' && p.required)
    .map((p) => `${p.name}=${encodeURIComponent(String(exampleOf(p.schema as Json, schemas) ?? ''))}`);
  const urlPath = path.replace(/\{([^}]+)\}/g, (_, name: string) => placeholder(name));
  const url = `${urlPath}${query.length ? `?${query.join('&')}` : ''}`;
  const content = op.requestBody?.content ?? {};
  const jsonBody = content['application/json']?.schema;
  const formBody = content['multipart/form-data']?.schema;
  const body = jsonBody ? exampleOf(jsonBody, schemas) : undefined;
  const formFields = formBody
    ? Object.keys(((formBody.properties as Json | undefined) ?? {}) as Json)
    : ([] as string[]);
  const idempotent = M === 'POST' && guarded;

  const curl = [`curl -X ${M} "$CALLPILOT_URL${url}"`];
  if (guarded) curl.push(`-H "Authorization: Bearer $CALLPILOT_API_KEY"`);
  if (idempotent) curl.push(`-H "Idempotency-Key: $(uuidgen)"`);
  if (body !== undefined) {
    curl.push(`-H "Content-Type: application/json"`);
    curl.push(`-d '${JSON.stringify(body, null, 2).replaceAll("'", "'\\''")}'`);
  }
  for (const field of formFields) curl.push(`-F "${field}=@./文档.pdf"`);

  const nodeHeaders = [
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the sample's own template literal, as text
    ...(guarded ? ['Authorization: `Bearer ${process.env.CALLPILOT_API_KEY}`'] : []),
    ...(idempotent ? ["'Idempotency-Key': crypto.randomUUID()"] : []),
    ...(body !== undefined ? ["'Content-Type': 'application/json'"] : []),
  ];
  const node = [
    ...(formFields.length
      ? ["import { openAsBlob } from 'node:fs';", '', 'const form = new FormData();']
      : []),
    ...formFields.map((f) => `form.append('${f}', await openAsBlob('./文档.pdf'), '文档.pdf');`),
    ...(formFields.length ? [''] : []),
    `const res = await fetch(\`\${process.env.CALLPILOT_URL}${url}\`, {`,
    `  method: '${M}',`,
    `  headers: {${nodeHeaders.length ? `\n${nodeHeaders.map((h) => `    ${h},`).join('\n')}\n  ` : ''}},`,
    ...(body !== undefined
      ? [`  body: JSON.stringify(${JSON.stringify(body, null, 2).replaceAll('\n', '\n  ')}),`]
      : []),
    ...(formFields.length ? ['  body: form,'] : []),
    '});',
    'const { success, data, message } = await res.json();',
    'if (!success) throw new Error(message);',
    'console.log(data);',
  ];

  const pyHeaders = [
    ...(guarded ? [`"Authorization": f"Bearer {os.environ['CALLPILOT_API_KEY']}"`] : []),
    ...(idempotent ? ['"Idempotency-Key": str(uuid.uuid4())'] : []),
  ];
  const python = [
    `import os${idempotent ? ', uuid' : ''}`,
    '',
    'import requests',
    '',
    `res = requests.${method}(`,
    `    f"{os.environ['CALLPILOT_URL']}${url}",`,
    `    headers={${pyHeaders.join(', ')}},`,
    ...(body !== undefined ? [`    json=${pythonLiteral(body, 4)},`] : []),
    ...(formFields.length
      ? [`    files={${formFields.map((f) => `"${f}": open("文档.pdf", "rb")`).join(', ')}},`]
      : []),
    '    timeout=30,',
    ')',
    'answer = res.json()',
    'if not answer["success"]:',
    '    raise RuntimeError(answer["message"])',
    'print(answer["data"])',
  ];

  const samples = [
    { lang: 'Shell', label: 'curl', source: curl.join(' \\\n  ') },
    { lang: 'JavaScript', label: 'Node.js', source: node.join('\n') },
    { lang: 'Python', label: 'Python', source: python.join('\n') },
  ];
  op['x-codeSamples'] = samples;
  const fence = { curl: 'bash', 'Node.js': 'javascript', Python: 'python' } as Record<string, string>;
  const shown = samples
    .map((s) => `${s.label}：\n\n\`\`\`${fence[s.label]}\n${s.source}\n\`\`\``)
    .join('\n\n');
  op.description = `${op.description ? `${op.description}\n\n` : ''}**示例**（环境变量 CALLPILOT_URL 为本平台地址，CALLPILOT_API_KEY 为 API 密钥）\n\n${shown}`;
}
