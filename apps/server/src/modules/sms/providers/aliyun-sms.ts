import { randomBytes } from 'node:crypto';
import net from 'node:net';
import { type Agent, FormData, fetch as undiciFetch } from 'undici';
import { guardedAgent, isPrivateAddress, urlHost } from '../../../lib/outbound-http';
import { acs3Authorization, acsDate, canonicalQueryString, sha256Hex } from './aliyun-signing';
import { aliyunErrorMeaning } from './aliyun-sms-errors';
import { RequestPacer, VENDOR_PACER_WINDOW_MS } from './request-pacer';
import type {
  AliyunCredentials,
  SmsDeliveryReceipt,
  SmsEndpoint,
  SmsInboundReply,
  SmsProviderClient,
  SmsPushParse,
  SmsReviewState,
  SmsSendRequest,
  SmsSendResult,
  SmsSignatureSource,
  SmsTemplateType,
} from './types';

/**
 * Aliyun SMS (短信服务, Dysmsapi 2017-05-25), RPC style over the V3 signature (aliyun-signing.ts):
 * every action is a POST to `/` with its parameters in the query string (SendBatchSms' JSON arrays
 * in a form body), the action and version in `x-acs-action` / `x-acs-version`, as the official SDK
 * (aliyun/alibabacloud-typescript-sdk dysmsapi-20170525) sends them.
 *
 * Followed (help.aliyun.com, 短信服务 > 开发参考):
 * - SendSms: PhoneNumbers, SignName, TemplateCode, TemplateParam (JSON object), OutId → BizId;
 *   单用户 QPS 5000/秒.
 * - SendBatchSms: PhoneNumberJson, SignNameJson, TemplateCode, TemplateParamJson (JSON arrays of
 *   the same length), at most 100 numbers per call, one BizId for the call; 单用户 QPS 5000/秒.
 * - QuerySendDetails: PhoneNumber, BizId, SendDate (yyyyMMdd), PageSize (1–50), CurrentPage →
 *   SmsSendDetailDTOs.SmsSendDetailDTO[] with SendStatus 1 等待回执 / 2 发送失败 / 3 发送成功, ErrCode,
 *   ReceiveDate (China time).
 * - Signatures and templates: the current interfaces, CreateSmsSign / GetSmsSign and
 *   CreateSmsTemplate / GetSmsTemplate ("新接口"; AddSmsSign and AddSmsTemplate are documented as
 *   已下线). Review states 0 审核中, 1 通过, 2 未通过 (AuditInfo.RejectInfo), 10 取消审核.
 * - Errors: business errors answer HTTP 200 with `Code` ≠ OK; the gateway answers 4xx/5xx with
 *   `{ RequestId, HostId, Code, Message, Recommend }` (see aliyun-sms-errors.ts).
 *
 * Retries: the client never retries. A send is not idempotent at Aliyun ("国内短信…均不支持幂等的能力，
 * 请您做好幂等控制"), so the one place that decides to send again is the module's queue, which
 * sees `retryable` and the message's history. A timeout is reported as not retryable for the same
 * reason: the documented advice is to wait for the receipt before sending again.
 */

export const ALIYUN_SMS_ENDPOINT: SmsEndpoint = { baseUrl: 'https://dysmsapi.aliyuncs.com' };
export const ALIYUN_SMS_VERSION = '2017-05-25';
/** SendSms and SendBatchSms: "本接口的单用户 QPS 限制为 5000/秒". */
export const ALIYUN_SEND_QPS = 5000;
/** SendBatchSms: "单次调用最多支持 100 个手机号". */
export const ALIYUN_BATCH_MAX = 100;
const DEFAULT_TIMEOUT_MS = 10_000;
const CHINA_OFFSET_MS = 8 * 3600_000;
const CONNECT_FAILURES = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'UND_ERR_CONNECT_TIMEOUT',
]);

/** A failure of a call that has no SmsSendResult to carry it (queries, reviews). */
export class AliyunSmsError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly retryable: boolean,
    readonly status: number | null = null,
  ) {
    super(message);
    this.name = 'AliyunSmsError';
  }
}

/** What the client needs of fetch: global fetch, undici's, or a test's. */
export type SmsFetch = (
  url: string,
  init: { method: string; headers: Record<string, string>; body?: string | FormData; signal?: AbortSignal },
) => Promise<{ status: number; text(): Promise<string> }>;

export interface AliyunSmsClientOptions {
  credentials: AliyunCredentials;
  endpoint?: SmsEndpoint;
  /** Instead of the guarded undici fetch. */
  fetchImpl?: SmsFetch;
  /** Epoch ms; signs x-acs-date and drives the rate limiter. */
  now?: () => number;
  sleep?: (ms: number) => Promise<void>;
  /** Sends per second this client keeps to; at most the documented 5000, lower for a shared account. */
  maxRequestsPerSecond?: number;
  /** Reach private addresses (a local server in tests); refused otherwise, as for webhooks. */
  allowPrivate?: boolean;
  timeoutMs?: number;
  /** The account's approved qualification (资质) CreateSmsSign requires when a signature brings none. */
  qualificationId?: number;
  nonce?: () => string;
}

let sharedAgents: { guarded?: Agent; open?: Agent } = {};

function agentFor(allowPrivate: boolean): Agent {
  const key = allowPrivate ? 'open' : 'guarded';
  sharedAgents[key] ??= guardedAgent({ allowPrivate });
  return sharedAgents[key] as Agent;
}

/** Closes the shared connection pools (process shutdown, tests). */
export async function closeAliyunSmsAgents(): Promise<void> {
  const agents = Object.values(sharedAgents);
  sharedAgents = {};
  await Promise.all(agents.map((a) => a?.close()));
}

/** `Date` → the China calendar day, yyyyMMdd, as SendDate wants it. */
export function chinaDay(ms: number): string {
  return new Date(ms + CHINA_OFFSET_MS).toISOString().slice(0, 10).replace(/-/g, '');
}

/** "2019-01-08 16:44:13" in China time (how Aliyun writes times) → Date; null when unreadable. */
export function parseChinaTime(text: unknown): Date | null {
  if (typeof text !== 'string') return null;
  const m = /^(\d{4}-\d\d-\d\d)[ T](\d\d:\d\d:\d\d)$/.exec(text.trim());
  if (!m) return null;
  const ms = Date.parse(`${m[1]}T${m[2]}+08:00`);
  return Number.isNaN(ms) ? null : new Date(ms);
}

const SIGN_SOURCES: Partial<Record<SmsSignatureSource, number>> = { enterprise: 0, app: 2, trademark: 5 };
const TEMPLATE_TYPES: Record<SmsTemplateType, number> = { verification: 0, notification: 1, marketing: 2 };

function reviewState(status: unknown, rejectInfo: unknown): SmsReviewState {
  const reason = typeof rejectInfo === 'string' && rejectInfo ? rejectInfo : null;
  switch (String(status)) {
    case '1':
      return { status: 'approved', reason: null };
    case '2':
      return { status: 'rejected', reason: reason ?? '阿里云审核未通过' };
    case '10':
      // Withdrawn at Aliyun (取消审核): it will not be approved, so it is as good as rejected here.
      return { status: 'rejected', reason: reason ?? '已在阿里云取消审核' };
    default:
      return { status: 'reviewing', reason: null };
  }
}

/** The ${name} variables of a template, in order of first appearance. */
function templateVariables(content: string): string[] {
  return [...new Set([...content.matchAll(/\$\{([^}]+)\}/g)].map((m) => m[1] as string))];
}

type CallAnswer =
  | { ok: true; body: Record<string, unknown> }
  | { ok: false; code: string; message: string; retryable: boolean; status: number | null };

export function createAliyunSmsClient(options: AliyunSmsClientOptions): SmsProviderClient {
  const { credentials } = options;
  const endpoint = options.endpoint ?? ALIYUN_SMS_ENDPOINT;
  const now = options.now ?? Date.now;
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const nonce = options.nonce ?? (() => randomBytes(16).toString('hex'));
  const allowPrivate = options.allowPrivate ?? false;
  const maxRequestsPerSecond = Math.max(
    1,
    Math.min(ALIYUN_SEND_QPS, Math.floor(options.maxRequestsPerSecond ?? ALIYUN_SEND_QPS)),
  );
  const limiter = new RequestPacer(
    maxRequestsPerSecond,
    { now, sleep: (ms) => sleep(ms) },
    VENDOR_PACER_WINDOW_MS,
  );
  const fetchImpl: SmsFetch =
    options.fetchImpl ?? ((url, init) => undiciFetch(url, { ...init, dispatcher: agentFor(allowPrivate) }));

  /** `form` goes in an x-www-form-urlencoded body, as the SDK sends SendBatchSms' JSON arrays. */
  async function call(
    action: string,
    params: Record<string, string>,
    form?: Record<string, string>,
  ): Promise<CallAnswer> {
    const base = new URL(endpoint.baseUrl);
    const failed = (code: string, message: string, retryable: boolean, status: number | null = null) =>
      ({ ok: false, code, message, retryable, status }) as const;
    if (!allowPrivate && net.isIP(urlHost(base)) && isPrivateAddress(urlHost(base))) {
      return failed('PRIVATE_ADDRESS', '阿里云短信接入地址为内网地址，已拒绝', false);
    }
    const query = canonicalQueryString(params);
    const body = form ? canonicalQueryString(form) : '';
    const hashedPayload = sha256Hex(body);
    const headers: Record<string, string> = {
      'x-acs-action': action,
      'x-acs-version': ALIYUN_SMS_VERSION,
      'x-acs-date': acsDate(now()),
      'x-acs-signature-nonce': nonce(),
      'x-acs-content-sha256': hashedPayload,
    };
    if (form) headers['content-type'] = 'application/x-www-form-urlencoded';
    headers.authorization = acs3Authorization(
      {
        method: 'POST',
        path: '/',
        query: params,
        headers: { host: base.host, ...headers },
        hashedPayload,
      },
      credentials.accessKeyId,
      credentials.accessKeySecret,
    );
    headers.accept = 'application/json';
    const url = `${base.origin}/${query ? `?${query}` : ''}`;
    const signal = AbortSignal.timeout(timeoutMs);
    let status: number;
    let text: string;
    try {
      const res = await fetchImpl(url, { method: 'POST', headers, signal, ...(form ? { body } : {}) });
      status = res.status;
      text = await res.text();
    } catch (err) {
      if (signal.aborted) {
        return failed(
          'TIMEOUT',
          `阿里云短信服务 ${Math.round(timeoutMs / 1000)} 秒内未应答，结果未知，请以回执为准`,
          false,
        );
      }
      const cause = (err as { cause?: { code?: string; message?: string } }).cause;
      if (cause?.code === 'E_PRIVATE_ADDRESS')
        return failed('PRIVATE_ADDRESS', '阿里云短信接入地址为内网地址，已拒绝', false);
      const reason = cause?.message ?? (err as Error).message;
      // Failing to connect means nothing reached Aliyun, so sending again is safe; a connection
      // lost after the request went out may have sent the message, like a timeout.
      if (CONNECT_FAILURES.has(cause?.code ?? ''))
        return failed('NETWORK', `无法连接阿里云短信服务：${reason}`, true);
      return failed(
        'NETWORK_UNCERTAIN',
        `与阿里云短信服务的连接中断，结果未知，请以回执为准：${reason}`,
        false,
      );
    }
    let answer: Record<string, unknown> = {};
    try {
      const parsed: unknown = JSON.parse(text);
      if (parsed && typeof parsed === 'object') answer = parsed as Record<string, unknown>;
    } catch {
      // A proxy's HTML error page, say: judged by its status below.
    }
    const code = typeof answer.Code === 'string' ? answer.Code : '';
    if (status === 200 && code === 'OK') return { ok: true, body: answer };
    const vendorMessage = typeof answer.Message === 'string' ? answer.Message : '';
    const meaning = aliyunErrorMeaning(code, vendorMessage, status);
    // Gateway signature errors echo the server's string to sign: the code says all that helps.
    const detail =
      code === 'SignatureDoesNotMatch' || !vendorMessage ? code : `${code}：${vendorMessage.slice(0, 200)}`;
    return failed(
      code || `HTTP_${status}`,
      `${meaning.zh}（${detail || `HTTP ${status}`}）`,
      meaning.retryable,
      status,
    );
  }

  async function mustCall(action: string, params: Record<string, string>): Promise<Record<string, unknown>> {
    const answer = await call(action, params);
    if (!answer.ok) throw new AliyunSmsError(answer.code, answer.message, answer.retryable, answer.status);
    return answer.body;
  }

  /**
   * A supporting file for a signature (MoreData takes OSS object keys, not file contents):
   * GetOSSInfoForUploadFile (BizType fcMediaSms) hands out a signed OSS PostObject policy, the file
   * is posted to its Host under its StartPath, and the object key is what CreateSmsSign receives.
   */
  async function uploadMaterial(file: { fileName: string; base64: string }): Promise<string> {
    const body = await mustCall('GetOSSInfoForUploadFile', { BizType: 'fcMediaSms' });
    const model = (body.Model ?? {}) as Record<string, unknown>;
    const {
      Host: host,
      Policy: policy,
      Signature: signature,
      AccessKeyId: ossKeyId,
      StartPath: startPath,
    } = model;
    if (![host, policy, signature, ossKeyId].every((v) => typeof v === 'string' && v)) {
      throw new AliyunSmsError('NO_OSS_POLICY', '阿里云未返回上传证明材料所需的 OSS 授权', true);
    }
    const safeName = file.fileName.replace(/[^\w.-]+/g, '_').slice(-80) || 'proof';
    const key = `${typeof startPath === 'string' && startPath ? `${startPath}/` : ''}${now()}_${safeName}`;
    const form = new FormData();
    form.append('key', key);
    form.append('OSSAccessKeyId', ossKeyId as string);
    form.append('policy', policy as string);
    form.append('Signature', signature as string);
    form.append('success_action_status', '200');
    // OSS reads every field before `file`, so it goes last.
    form.append('file', new Blob([Buffer.from(file.base64, 'base64')]), safeName);
    const target = new URL(host as string);
    if (!allowPrivate && net.isIP(urlHost(target)) && isPrivateAddress(urlHost(target))) {
      throw new AliyunSmsError('PRIVATE_ADDRESS', '阿里云返回的上传地址为内网地址，已拒绝', false);
    }
    let status: number;
    try {
      const res = await fetchImpl(target.href, {
        method: 'POST',
        headers: {},
        body: form,
        signal: AbortSignal.timeout(timeoutMs),
      });
      status = res.status;
      await res.text();
    } catch (err) {
      throw new AliyunSmsError('OSS_UPLOAD_FAILED', `上传签名证明材料失败：${(err as Error).message}`, true);
    }
    if (status !== 200 && status !== 204) {
      throw new AliyunSmsError(
        'OSS_UPLOAD_FAILED',
        `上传签名证明材料失败（OSS HTTP ${status}）`,
        status >= 500,
      );
    }
    return key;
  }

  const paramsObject = (params: SmsSendRequest['params']) =>
    Object.fromEntries(params.map((p) => [p.name, p.value]));

  return {
    kind: 'aliyun',
    maxRequestsPerSecond,

    async send(request) {
      const params: Record<string, string> = {
        PhoneNumbers: request.phone,
        SignName: request.signName,
        TemplateCode: request.templateCode,
        OutId: request.outId,
      };
      if (request.params.length > 0) params.TemplateParam = JSON.stringify(paramsObject(request.params));
      await limiter.take();
      const answer = await call('SendSms', params);
      if (!answer.ok)
        return { ok: false, code: answer.code, message: answer.message, retryable: answer.retryable };
      const bizId = answer.body.BizId;
      if (typeof bizId !== 'string' || !bizId)
        return { ok: false, code: 'NO_BIZ_ID', message: '阿里云应答中没有 BizId', retryable: false };
      return { ok: true, providerMessageId: bizId };
    },

    async sendBatch(templateCode, items) {
      const results: SmsSendResult[] = [];
      for (let start = 0; start < items.length; start += ALIYUN_BATCH_MAX) {
        const chunk = items.slice(start, start + ALIYUN_BATCH_MAX);
        // One OutId per call at Aliyun, so none is sent: every item of a call shares its BizId and
        // receipts are matched by BizId and phone number.
        // The arrays go in the body (100 numbers with their variables outgrow a URL).
        const form: Record<string, string> = {
          PhoneNumberJson: JSON.stringify(chunk.map((i) => i.phone)),
          SignNameJson: JSON.stringify(chunk.map((i) => i.signName)),
        };
        if (chunk.some((i) => i.params.length > 0))
          form.TemplateParamJson = JSON.stringify(chunk.map((i) => paramsObject(i.params)));
        await limiter.take();
        const answer = await call('SendBatchSms', { TemplateCode: templateCode }, form);
        const bizId = answer.ok ? answer.body.BizId : undefined;
        const result: SmsSendResult = !answer.ok
          ? { ok: false, code: answer.code, message: answer.message, retryable: answer.retryable }
          : typeof bizId === 'string' && bizId
            ? { ok: true, providerMessageId: bizId }
            : { ok: false, code: 'NO_BIZ_ID', message: '阿里云应答中没有 BizId', retryable: false };
        for (const _ of chunk) results.push(result);
      }
      return results;
    },

    async querySendDetails(phone, providerMessageId, sentAt) {
      const body = await mustCall('QuerySendDetails', {
        PhoneNumber: phone,
        BizId: providerMessageId,
        SendDate: chinaDay(sentAt.getTime()),
        PageSize: '10',
        CurrentPage: '1',
      });
      const list = (body.SmsSendDetailDTOs as { SmsSendDetailDTO?: unknown } | undefined)?.SmsSendDetailDTO;
      const details = (Array.isArray(list) ? list : []) as Record<string, unknown>[];
      const detail = details.find((d) => d.PhoneNum === phone) ?? details[0];
      if (!detail) return null;
      const status = Number(detail.SendStatus);
      if (status !== 2 && status !== 3) return null;
      const errCode = typeof detail.ErrCode === 'string' && detail.ErrCode ? detail.ErrCode : null;
      return {
        providerMessageId,
        phone,
        outId: typeof detail.OutId === 'string' && detail.OutId ? detail.OutId : null,
        status: status === 3 ? 'delivered' : 'failed',
        errorCode: status === 3 ? null : errCode,
        errorMessage: status === 3 ? null : errCode,
        reportedAt: parseChinaTime(detail.ReceiveDate) ?? parseChinaTime(detail.SendDate) ?? new Date(now()),
      } satisfies SmsDeliveryReceipt;
    },

    async submitSignature(signature) {
      const source = SIGN_SOURCES[signature.source];
      if (source === undefined) {
        throw new AliyunSmsError(
          'UNSUPPORTED_SIGN_SOURCE',
          '阿里云签名来源仅支持企事业单位、App 或商标（网站、公众号、小程序来源已不再受理）',
          false,
        );
      }
      const refs = signature.aliyun ?? {};
      const qualificationId = refs.qualificationId ?? options.qualificationId;
      if (qualificationId === undefined) {
        throw new AliyunSmsError(
          'MISSING_QUALIFICATION',
          '申请阿里云签名需要已审核通过的资质 ID（QualificationId）',
          false,
        );
      }
      const params: Record<string, string> = {
        SignName: signature.name,
        SignSource: String(source),
        // 通用 (1), as the documentation recommends: a 验证码 (0) signature can send only 验证码 templates.
        SignType: '1',
        Remark: signature.remark,
        QualificationId: String(qualificationId),
        ThirdParty: String(refs.thirdParty ?? false),
      };
      if (source === 2) {
        if (refs.appIcpRecordId === undefined)
          throw new AliyunSmsError('MISSING_APP_ICP_RECORD', 'App 来源的签名需要 APP-ICP 备案实体 ID', false);
        params.AppIcpRecordId = String(refs.appIcpRecordId);
      }
      if (source === 5) {
        if (refs.trademarkId === undefined)
          throw new AliyunSmsError('MISSING_TRADEMARK', '商标来源的签名需要商标实体 ID', false);
        params.TrademarkId = String(refs.trademarkId);
      }
      if (signature.proof) params.MoreData = JSON.stringify([await uploadMaterial(signature.proof)]);
      const body = await mustCall('CreateSmsSign', params);
      return {
        providerRef: typeof body.SignName === 'string' && body.SignName ? body.SignName : signature.name,
      };
    },

    async querySignature(providerRef) {
      const body = await mustCall('GetSmsSign', { SignName: providerRef });
      return reviewState(
        body.SignStatus,
        (body.AuditInfo as { RejectInfo?: unknown } | undefined)?.RejectInfo,
      );
    },

    async submitTemplate(template) {
      const params: Record<string, string> = {
        TemplateName: template.name,
        TemplateContent: template.content,
        TemplateType: String(TEMPLATE_TYPES[template.type]),
        Remark: template.remark,
      };
      if (template.signName) params.RelatedSignName = template.signName;
      const variables = templateVariables(template.content);
      if (variables.length > 0) {
        // TemplateRule is required when the content has variables ("TemplateRule&TemplateContent参数填写
        // 示例"): a 验证码 template's one variable is a 4–6 digit code, anything else is text ("others").
        params.TemplateRule = JSON.stringify(
          Object.fromEntries(
            variables.map((name) => [name, template.type === 'verification' ? 'numberCaptcha' : 'others']),
          ),
        );
      }
      const body = await mustCall('CreateSmsTemplate', params);
      const code = body.TemplateCode;
      if (typeof code !== 'string' || !code)
        throw new AliyunSmsError('NO_TEMPLATE_CODE', '阿里云应答中没有 TemplateCode', false);
      return { providerRef: code };
    },

    async queryTemplate(providerRef) {
      const body = await mustCall('GetSmsTemplate', { TemplateCode: providerRef });
      return reviewState(
        body.TemplateStatus,
        (body.AuditInfo as { RejectInfo?: unknown } | undefined)?.RejectInfo,
      );
    },
  };
}

/** What Aliyun expects back from a push receiver, or it pushes the batch again. */
export const ALIYUN_PUSH_ANSWER = { code: 0, msg: '成功' } as const;

const str = (v: unknown) => (typeof v === 'string' ? v : typeof v === 'number' ? String(v) : '');

/**
 * Aliyun's HTTP batch push (消息回执 "HTTP批量推送模式"): a POST whose body is a JSON array.
 * SmsReport: { phone_number, success, biz_id, out_id, send_time, report_time, err_code, err_msg,
 * sms_size }; SmsUp: { phone_number, content, sign_name, send_time, dest_code, sequence_id }. Times
 * are China time. A body that is not such an array is answered 400 so Aliyun (or whoever sent it)
 * sees it was not taken; items without a phone number or BizId are skipped.
 */
export function parseAliyunPush(kind: 'SmsReport' | 'SmsUp', body: unknown): SmsPushParse {
  const parsed = typeof body === 'string' ? safeJson(body) : body;
  if (!Array.isArray(parsed)) {
    return {
      receipts: [],
      replies: [],
      answer: { status: 400, body: { code: 1, msg: '推送内容应为 JSON 数组' } },
    };
  }
  const items = parsed.filter((i): i is Record<string, unknown> => !!i && typeof i === 'object');
  const receipts: SmsDeliveryReceipt[] = [];
  const replies: SmsInboundReply[] = [];
  if (kind === 'SmsReport') {
    for (const item of items) {
      const phone = str(item.phone_number);
      const bizId = str(item.biz_id);
      if (!phone || !bizId) continue;
      const delivered = item.success === true || item.success === 'true';
      const errCode = str(item.err_code) || null;
      receipts.push({
        providerMessageId: bizId,
        phone,
        outId: str(item.out_id) || null,
        status: delivered ? 'delivered' : 'failed',
        errorCode: delivered ? null : errCode,
        errorMessage: delivered ? null : str(item.err_msg) || errCode,
        reportedAt: parseChinaTime(item.report_time) ?? parseChinaTime(item.send_time) ?? new Date(),
      });
    }
  } else {
    for (const item of items) {
      const phone = str(item.phone_number);
      if (!phone) continue;
      replies.push({
        phone,
        content: str(item.content),
        receivedAt: parseChinaTime(item.send_time) ?? new Date(),
        signName: str(item.sign_name) || null,
      });
    }
  }
  return { receipts, replies, answer: { status: 200, body: ALIYUN_PUSH_ANSWER } };
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
