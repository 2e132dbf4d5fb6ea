import type { OpenApiDocument } from '../utils/openapi';

const error = (description: string) => ({
  description,
  content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorEnvelope' } } },
});

const envelope = (data: unknown) => ({
  description: '成功',
  content: {
    'application/json': {
      schema: {
        type: 'object',
        properties: {
          success: { type: 'boolean', enum: [true] },
          status: { type: 'integer', minimum: -9007199254740991, maximum: 9007199254740991 },
          data,
          message: { type: 'string' },
          msg: { type: 'string' },
          error: { type: 'null' },
        },
        required: ['success', 'status', 'data', 'message', 'msg', 'error'],
      },
    },
  },
});

const idempotencyKey = {
  in: 'header',
  name: 'Idempotency-Key',
  required: false,
  description: '幂等键（1–255 个可打印 ASCII 字符），24 小时内相同的键返回首次的应答',
  schema: { type: 'string', minLength: 1, maxLength: 255 },
};

/** The open API's document as @fastify/swagger writes it from the zod contracts (a few operations). */
export const OPENAPI_FIXTURE: OpenApiDocument = {
  openapi: '3.1.0',
  info: { title: '智能语音外呼平台 开放接口', version: '1.4.0' },
  tags: [{ name: '开放接口 · 通话' }, { name: '开放接口 · 免打扰名单' }, { name: '开放接口 · 密钥' }],
  security: [{ ApiKeyAuth: [] }],
  paths: {
    '/opendock/v1/calls': {
      get: {
        summary: '列出通话记录',
        description: '按时间倒序，游标分页。',
        tags: ['开放接口 · 通话'],
        'x-scope': 'records:read',
        parameters: [
          {
            in: 'query',
            name: 'limit',
            required: false,
            description: '每页条数',
            schema: { type: 'integer', minimum: 1, maximum: 100, default: 20 },
          },
          {
            in: 'query',
            name: 'cursor',
            required: false,
            description: '上一页的 nextCursor',
            schema: { type: 'string' },
          },
          {
            in: 'query',
            name: 'direction',
            required: false,
            schema: { type: 'string', enum: ['outbound', 'inbound'] },
          },
          {
            in: 'query',
            name: 'grade',
            required: false,
            description: '意向等级',
            schema: { type: 'string', enum: ['A', 'B', 'C', 'D'], example: 'A' },
          },
        ],
        responses: {
          '200': envelope({ $ref: '#/components/schemas/CallPage' }),
          '401': error('密钥无效、已过期或已吊销'),
          '429': error('请求过于频繁'),
        },
      },
      post: {
        summary: '发起单通外呼',
        description: '立即返回通话 ID，通话在后台进行；结果见通话详情或 Webhook。',
        tags: ['开放接口 · 通话'],
        'x-scope': 'calls:write',
        parameters: [idempotencyKey],
        requestBody: {
          required: true,
          content: { 'application/json': { schema: { $ref: '#/components/schemas/PlaceCallRequestInput' } } },
        },
        responses: {
          '200': envelope({ $ref: '#/components/schemas/PlacedCall' }),
          '400': error('参数错误'),
          '409': error('号码在免打扰名单中'),
        },
      },
    },
    '/opendock/v1/calls/{callId}': {
      get: {
        summary: '通话详情',
        tags: ['开放接口 · 通话'],
        'x-scope': 'records:read',
        parameters: [{ in: 'path', name: 'callId', required: true, schema: { type: 'string' } }],
        responses: { '200': envelope({ type: 'object', properties: { id: { type: 'string' } } }) },
      },
    },
    '/opendock/v1/do-not-call/{phone}': {
      delete: {
        summary: '移出免打扰名单',
        tags: ['开放接口 · 免打扰名单'],
        'x-scope': 'do_not_call:write',
        parameters: [
          { in: 'path', name: 'phone', required: true, schema: { type: 'string', example: '13800138000' } },
        ],
        responses: { '200': envelope({ type: 'object', properties: { deleted: { type: 'boolean' } } }) },
      },
    },
    '/opendock/v1/me': {
      get: {
        summary: '当前密钥',
        tags: ['开放接口 · 密钥'],
        responses: { '200': envelope({ type: 'object', properties: { keyId: { type: 'string' } } }) },
      },
    },
  },
  components: {
    securitySchemes: { ApiKeyAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'cp_live_…' } },
    schemas: {
      PlaceCallRequestInput: {
        type: 'object',
        properties: {
          assistantId: { type: 'string', description: '智能小助手 ID', example: 'ast_5Kd8Lp' },
          assistantVersion: {
            description: '发布版本号，默认当前线上版本',
            type: 'integer',
            minimum: 1,
            maximum: 9007199254740991,
          },
          phone: { type: 'string', description: '被叫号码', minLength: 1, maxLength: 30 },
          callerNumber: { type: 'string', description: '主叫号码（项目号码之一）' },
          variables: {
            type: 'object',
            description: '小助手话术中的 {{变量}}',
            propertyNames: { type: 'string' },
            additionalProperties: { type: 'string' },
            example: { 客户姓名: '张先生' },
          },
        },
        required: ['assistantId', 'phone'],
      },
      PlacedCall: {
        type: 'object',
        properties: {
          callId: { type: 'string', description: '通话 ID' },
          status: { type: 'string', enum: ['queued', 'ringing'] },
        },
        required: ['callId', 'status'],
      },
      CallPage: {
        type: 'object',
        properties: {
          items: { type: 'array', items: { type: 'object', properties: { id: { type: 'string' } } } },
          nextCursor: { anyOf: [{ type: 'string' }, { type: 'null' }] },
        },
        required: ['items', 'nextCursor'],
      },
      ErrorEnvelope: {
        type: 'object',
        properties: { success: { type: 'boolean', enum: [false] }, error: { type: 'string' } },
      },
    },
  },
};
