import { z } from 'zod';
import { entityId, optionalText, paged, requiredText } from './common';
import { parseHostPort, parseIpRange } from './net-address';

// ---- SIP trunks (线路管理) ----

export const trunkKind = z.enum(['register', 'ip'], {
  error: '线路类型须为 register（注册）或 ip（IP 对接）',
});
export type TrunkKind = z.infer<typeof trunkKind>;
export const TRUNK_KIND_LABELS: Record<TrunkKind, string> = { register: '注册', ip: 'IP 对接' };

export const trunkTransport = z.enum(['udp', 'tcp'], { error: '传输协议须为 udp 或 tcp' });
export type TrunkTransport = z.infer<typeof trunkTransport>;

export const trunkCodec = z.enum(['PCMA', 'PCMU'], { error: '语音编码只支持 PCMA 和 PCMU' });
export type TrunkCodec = z.infer<typeof trunkCodec>;

/** How the caller number is written in From / P-Asserted-Identity: carriers differ. */
export const callerIdFormat = z.enum(['e164', 'national', 'raw'], {
  error: '主叫号码格式须为 e164、national 或 raw',
});
export type CallerIdFormat = z.infer<typeof callerIdFormat>;
export const CALLER_ID_FORMAT_LABELS: Record<CallerIdFormat, string> = {
  e164: '国际格式（+8621xxxxxxxx）',
  national: '国内格式（021xxxxxxxx）',
  raw: '按号码原样',
};

export const REGISTER_EXPIRES = { min: 60, max: 3600, default: 300 } as const;
export const TRUNK_CONCURRENCY = { min: 1, max: 10_000, default: 30 } as const;
export const MAX_PEER_ADDRESSES = 20;

const hostPortField = (label: string) =>
  z
    .string({ error: `${label}须为文本` })
    .trim()
    .max(260, { error: `${label}：不能超过 260 个字符` })
    .superRefine((value, ctx) => {
      if (value === '') return;
      const parsed = parseHostPort(value, label);
      if (!parsed.ok) ctx.addIssue({ code: 'custom', message: parsed.reason });
    });

/** The user part of a SIP URI (RFC 3261 §25.1 user-unreserved and unreserved characters). */
const sipUser = (label: string) =>
  z
    .string({ error: `${label}须为文本` })
    .trim()
    .max(64, { error: `${label}：不能超过 64 个字符` })
    .regex(/^[A-Za-z0-9\-_.!~*'()&=+$,;?/]*$/, {
      error: `${label}：只能包含字母、数字和 - _ . + 等符号，不能有空格、@ 或冒号`,
    });

const peerAddress = z
  .string({ error: '对端地址须为文本' })
  .trim()
  .max(64, { error: '对端地址：请填写 IP 或网段（CIDR），如 203.0.113.10 或 203.0.113.0/24' })
  .superRefine((value, ctx) => {
    const parsed = parseIpRange(value, '对端地址');
    if (!parsed.ok) ctx.addIssue({ code: 'custom', message: parsed.reason });
  });

/** One field schema per form field: the console validates each with the server's own rule. */
export const trunkFields = {
  name: requiredText('线路名称', 50),
  kind: trunkKind,
  transport: trunkTransport.default('udp'),
  registrar: hostPortField('注册服务器').default(''),
  username: sipUser('用户名').default(''),
  /** Empty: the username authenticates (most carriers). */
  authUsername: sipUser('认证用户名').default(''),
  /** Write-only. On update, omit it or send an empty string to keep the stored password. */
  password: optionalText('密码', 128).optional(),
  registerExpires: z
    .number({ error: '注册有效期：须为整数（秒）' })
    .int({ error: '注册有效期：须为整数（秒）' })
    .min(REGISTER_EXPIRES.min, { error: '注册有效期：须在 60 到 3600 秒之间' })
    .max(REGISTER_EXPIRES.max, { error: '注册有效期：须在 60 到 3600 秒之间' })
    .default(REGISTER_EXPIRES.default),
  outboundProxy: hostPortField('出站代理').default(''),
  signallingAddress: hostPortField('信令地址').default(''),
  peerAddresses: z
    .array(peerAddress, { error: '对端地址须为列表' })
    .max(MAX_PEER_ADDRESSES, { error: `对端地址：最多填写 ${MAX_PEER_ADDRESSES} 个` })
    .default([]),
  codecs: z
    .array(trunkCodec, { error: '语音编码须为列表' })
    .min(1, { error: '语音编码：至少选择一种' })
    .max(2, { error: '语音编码：不能重复' })
    .refine((codecs) => new Set(codecs).size === codecs.length, { error: '语音编码：不能重复' })
    .default(['PCMA', 'PCMU']),
  callerIdFormat: callerIdFormat.default('national'),
  maxConcurrent: z
    .number({ error: '并发上限：须为整数' })
    .int({ error: '并发上限：须为整数' })
    .min(TRUNK_CONCURRENCY.min, { error: '并发上限：须在 1 到 10000 之间' })
    .max(TRUNK_CONCURRENCY.max, { error: '并发上限：须在 1 到 10000 之间' })
    .default(TRUNK_CONCURRENCY.default),
  enabled: z.boolean({ error: '是否启用须为布尔值' }).default(true),
};

/**
 * Create and update share one body. Fields of the other kind are ignored (and cleared on save),
 * so switching a trunk from 注册 to IP 对接 leaves no stale credentials behind.
 */
export const trunkWriteRequest = z
  .object(trunkFields)
  .superRefine((trunk, ctx) => {
    const need = (path: keyof typeof trunkFields, message: string) =>
      ctx.addIssue({ code: 'custom', path: [path], message });
    if (trunk.kind === 'register') {
      if (!trunk.registrar) need('registrar', '注册服务器：注册线路须填写，格式应为 主机[:端口]');
      if (!trunk.username) need('username', '用户名：注册线路须填写');
    } else {
      if (!trunk.signallingAddress)
        need('signallingAddress', '信令地址：IP 对接线路须填写，格式应为 主机[:端口]');
      if (trunk.peerAddresses.length === 0) {
        need('peerAddresses', '对端地址：至少填写一个 IP 或网段（CIDR），只接受来自这些地址的呼入');
      }
    }
  })
  .meta({ id: 'TrunkWriteRequest' });
export type TrunkWriteRequest = z.input<typeof trunkWriteRequest>;

export const trunkEnabledRequest = z
  .object({ enabled: z.boolean({ error: '是否启用须为布尔值' }) })
  .meta({ id: 'TrunkEnabledRequest' });

/**
 * What the console shows about a trunk right now. `sip_off`: this server runs the simulated
 * carrier (TELEPHONY=sim), so no trunk registers or carries calls. Register trunks report their
 * registration; IP trunks their last OPTIONS ping.
 */
export const trunkState = z.enum([
  'sip_off',
  'disabled',
  'unregistered',
  'registering',
  'registered',
  'failed',
  'reachable',
  'unreachable',
  'unknown',
]);
export type TrunkState = z.infer<typeof trunkState>;
export const TRUNK_STATE_LABELS: Record<TrunkState, string> = {
  sip_off: '未启用',
  disabled: '已停用',
  unregistered: '未注册',
  registering: '注册中',
  registered: '已注册',
  failed: '注册失败',
  reachable: '可达',
  unreachable: '不可达',
  unknown: '待检测',
};

export const trunkStatus = z
  .object({
    state: trunkState,
    /** Why, in words a user can act on: the carrier's reason, or why SIP is not running. */
    detail: z.string().nullable(),
    registeredAt: z.iso.datetime().nullable(),
    optionsAt: z.iso.datetime().nullable(),
    optionsRttMs: z.number().int().nullable(),
    /** SIP status of the last OPTIONS answer (408 when none came back). */
    optionsStatus: z.number().int().nullable(),
    /** Calls up on the trunk in this server, when the SIP runtime knows. */
    activeCalls: z.number().int().nullable(),
  })
  .meta({ id: 'TrunkStatus' });
export type TrunkStatus = z.infer<typeof trunkStatus>;

export const trunk = z
  .object({
    id: z.string(),
    name: z.string(),
    kind: trunkKind,
    transport: trunkTransport,
    registrar: z.string(),
    username: z.string(),
    authUsername: z.string(),
    /** Only whether a password is stored and a short hint; the password never leaves the server. */
    hasPassword: z.boolean(),
    passwordHint: z.string(),
    registerExpires: z.number().int(),
    outboundProxy: z.string(),
    signallingAddress: z.string(),
    peerAddresses: z.array(z.string()),
    codecs: z.array(trunkCodec),
    callerIdFormat,
    maxConcurrent: z.number().int(),
    enabled: z.boolean(),
    /** The project's numbers on this trunk. */
    numberCount: z.number().int(),
    status: trunkStatus,
    createdAt: z.iso.datetime(),
    updatedAt: z.iso.datetime(),
  })
  .meta({ id: 'Trunk' });
export type Trunk = z.infer<typeof trunk>;

export const trunkList = paged(trunk).meta({ id: 'TrunkList' });

export const trunkIdParams = z.object({
  projectId: entityId('项目 ID'),
  trunkId: entityId('线路 ID'),
});

/** 测试呼叫: dial one number through the trunk and report each SIP step. */
export const trunkTestCallRequest = z
  .object({
    number: z
      .string({ error: '请输入被叫号码' })
      .trim()
      .min(1, { error: '请输入被叫号码' })
      .regex(/^\+?[0-9*#]{2,32}$/, { error: '被叫号码：只能包含数字（可用 + 开头），2 到 32 位' }),
  })
  .meta({ id: 'TrunkTestCallRequest' });
export type TrunkTestCallRequest = z.infer<typeof trunkTestCallRequest>;

/** One SIP step of a test call, as the console lists it. */
export const trunkTestStep = z
  .object({
    /** Milliseconds since the test call began. */
    at: z.number().int(),
    /** `out`: we sent it; `in`: the trunk answered; `info`: what happened in between. */
    direction: z.enum(['out', 'in', 'info']),
    /** e.g. `INVITE sip:13800138000@sip.example.com`, `401 Unauthorized`. */
    message: z.string(),
    /** SIP status of a response, null for requests and notes. */
    status: z.number().int().nullable(),
    /** Chinese explanation shown next to it (需要鉴权, 对方振铃, ...). */
    note: z.string(),
  })
  .meta({ id: 'TrunkTestStep' });
export type TrunkTestStep = z.infer<typeof trunkTestStep>;

/** The events of `POST .../trunks/:trunkId/test-call`, one `data: <json>` line each. */
export const trunkTestEvent = z.discriminatedUnion('type', [
  z.object({ type: z.literal('step'), step: trunkTestStep }),
  z.object({ type: z.literal('done'), ok: z.boolean(), message: z.string() }),
]);
export type TrunkTestEvent = z.infer<typeof trunkTestEvent>;
