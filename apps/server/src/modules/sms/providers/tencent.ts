import net from 'node:net';
import { fetch as undiciFetch } from 'undici';
import { type Clock, systemClock } from '../../../engine/clock';
import { guardedAgent, isPrivateAddress, urlHost } from '../../../lib/outbound-http';
import { RequestPacer, VENDOR_PACER_WINDOW_MS } from './request-pacer';
import { describeTencentError, TencentSmsError, tencentErrorMessage } from './tencent-errors';
import { signTc3 } from './tencent-signing';
import type {
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
  TencentCredentials,
} from './types';

/**
 * Tencent Cloud SMS, API 3.0 version 2021-01-11 (e.g. SendSms, https://cloud.tencent.com/document/api/382/55981):
 * JSON POSTs to sms.tencentcloudapi.com signed with TC3-HMAC-SHA256, the action and version in
 * X-TC-* headers, answers as `{"Response": {..., "RequestId"}}` or `{"Response": {"Error": {Code,
 * Message}, "RequestId"}}`.
 */

export const TENCENT_SMS_VERSION = '2021-01-11';
export const TENCENT_SMS_SERVICE = 'sms';
export const TENCENT_SMS_BASE_URL = 'https://sms.tencentcloudapi.com';
/** SendSms: "默认接口请求频率限制：3000次/秒" (https://cloud.tencent.com/document/api/382/55981). */
export const TENCENT_SEND_SMS_MAX_RPS = 3000;
/** SendSms's PhoneNumberSet: "单次请求最多支持200个手机号". */
export const TENCENT_MAX_NUMBERS_PER_SEND = 200;
const CONTENT_TYPE = 'application/json; charset=utf-8';
/** PullSmsSendStatusByPhoneNumber: "最大可拉取当前时期前7天的数据", at most 100 rows. */
const PULL_MAX_DAYS = 7;
const PULL_LIMIT = 100;

export type TencentFetch = (
  url: string,
  init: { method: 'POST'; headers: Record<string, string>; body: string; signal: AbortSignal },
) => Promise<{ status: number; text(): Promise<string> }>;

export interface TencentSmsClientOptions {
  credentials: TencentCredentials;
  endpoint: SmsEndpoint;
  /** Defaults to undici's fetch through the guarded agent (lib/outbound-http.ts). */
  fetchImpl?: TencentFetch;
  /** Time for X-TC-Timestamp and the send pacer (default the system clock). */
  clock?: Clock;
  /** SendSms requests per second the client keeps to (default Tencent's documented 3000). */
  maxRequestsPerSecond?: number;
  /** Lets the endpoint be a private address: only tests, whose local server listens on 127.0.0.1. */
  allowPrivate?: boolean;
  timeoutMs?: number;
}

type TencentAnswer =
  | { ok: true; response: Record<string, unknown>; requestId: string | null }
  | { ok: false; code: string; message: string; retryable: boolean; requestId: string | null };

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const text = (value: unknown): string =>
  typeof value === 'string' ? value : value == null ? '' : String(value);

/** E.164 with +86 for a mainland number; numbers already carrying a country code pass unchanged. */
export function toE164(phone: string): string {
  const digits = phone.replace(/[\s-]/g, '');
  if (digits.startsWith('+')) return digits;
  if (digits.startsWith('0086')) return `+${digits.slice(2)}`;
  if (/^86\d{11}$/.test(digits)) return `+${digits}`;
  return `+86${digits}`;
}

/** The 11-digit mainland number of an E.164 or national form, as our records keep it. */
export function fromE164(phone: string, nationCode = '86'): string {
  const digits = phone.replace(/[\s-]/g, '');
  if (digits.startsWith(`+${nationCode}`)) return digits.slice(nationCode.length + 1);
  return digits;
}

/**
 * Our template text uses named `${name}` variables; Tencent's uses numbered `{1}`, `{2}`, filled from
 * TemplateParamSet in that order. Each distinct name takes the next number at its first appearance,
 * which is also the order `SmsSendRequest.params` lists them in.
 */
export function toTencentTemplateContent(content: string): string {
  const numbers = new Map<string, number>();
  return content.replace(/\$\{([^}]+)\}/g, (_, name: string) => {
    let n = numbers.get(name);
    if (n === undefined) {
      n = numbers.size + 1;
      numbers.set(name, n);
    }
    return `{${n}}`;
  });
}

/**
 * SmsType of AddSmsTemplate: 1 营销短信, 2 通知短信, 3 验证码短信. Tencent split its former 0 普通短信 into
 * 通知 and 验证码 on 2024-05-16 (关于腾讯云短信模板类型优化公告, https://cloud.tencent.com/document/product/382/106171).
 */
export const TENCENT_SMS_TYPE: Record<SmsTemplateType, number> = {
  marketing: 1,
  notification: 2,
  verification: 3,
};

/**
 * SignType and the DocumentType (证明类型) AddSmsSign requires with it. Tencent no longer accepts 网站 (2),
 * 公众号 (3), 小程序 (6) or, for mainland signatures, APP (1) (关于腾讯云短信签名申请规则更新的公告): those are
 * refused here with the reason rather than sent to be rejected.
 */
const TENCENT_SIGN_TYPE: Partial<Record<SmsSignatureSource, { signType: number; documentType: number }>> = {
  // 0 公司 with 0 三证合一 (a business licence today carries the unified credit code).
  enterprise: { signType: 0, documentType: 0 },
  // 4 商标 with 7 商标注册书.
  trademark: { signType: 4, documentType: 7 },
};

const SOURCE_ZH: Record<SmsSignatureSource, string> = {
  enterprise: '企业',
  app: 'App',
  website: '网站',
  official_account: '公众号',
  mini_program: '小程序',
  trademark: '商标',
};

/** Review states of DescribeSmsSignList / DescribeSmsTemplateList: 0 usable, 1 reviewing, 2 approved but not yet effective, -1 rejected. */
function reviewState(statusCode: unknown, reviewReply: unknown): SmsReviewState {
  if (statusCode === 0) return { status: 'approved', reason: null };
  if (statusCode === -1) return { status: 'rejected', reason: text(reviewReply) || '审核未通过' };
  return { status: 'reviewing', reason: null };
}

/** "YYYY-MM-DD HH:mm:ss" in China time (Tencent's callbacks), or unix seconds. */
function chinaTime(value: unknown): Date | null {
  if (typeof value === 'number' && Number.isFinite(value)) return new Date(value * 1000);
  if (typeof value === 'string' && /^\d{9,11}$/.test(value.trim())) return new Date(Number(value) * 1000);
  const match = /^(\d{4})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2}):(\d{2})$/.exec(text(value).trim());
  if (!match) return null;
  const date = new Date(`${match[1]}-${match[2]}-${match[3]}T${match[4]}:${match[5]}:${match[6]}+08:00`);
  return Number.isNaN(date.getTime()) ? null : date;
}

export function createTencentSmsClient(options: TencentSmsClientOptions): SmsProviderClient {
  const { credentials } = options;
  const clock = options.clock ?? systemClock;
  const maxRequestsPerSecond = options.maxRequestsPerSecond ?? TENCENT_SEND_SMS_MAX_RPS;
  const pacer = new RequestPacer(maxRequestsPerSecond, clock, VENDOR_PACER_WINDOW_MS);
  const timeoutMs = options.timeoutMs ?? 10_000;
  const url = new URL(options.endpoint.baseUrl);
  const fetchImpl: TencentFetch =
    options.fetchImpl ??
    (() => {
      const agent = guardedAgent({ allowPrivate: options.allowPrivate ?? false });
      return (target, init) => undiciFetch(target, { ...init, dispatcher: agent });
    })();

  async function call(action: string, body: Record<string, unknown>): Promise<TencentAnswer> {
    const payload = JSON.stringify(body);
    const timestamp = Math.floor(clock.now() / 1000);
    const host = url.host;
    // The guarded agent checks names at connect time; an IP literal never reaches that lookup.
    const literal = urlHost(url);
    if (!options.allowPrivate && net.isIP(literal) && isPrivateAddress(literal))
      return {
        ok: false,
        code: 'ClientError.PrivateAddress',
        message: '服务地址为内网地址，已拒绝',
        retryable: false,
        requestId: null,
      };
    const signed = signTc3({
      secretId: credentials.secretId,
      secretKey: credentials.secretKey,
      service: TENCENT_SMS_SERVICE,
      host,
      contentType: CONTENT_TYPE,
      payload,
      timestamp,
    });
    const headers: Record<string, string> = {
      Authorization: signed.authorization,
      'Content-Type': CONTENT_TYPE,
      'X-TC-Action': action,
      'X-TC-Version': TENCENT_SMS_VERSION,
      'X-TC-Timestamp': String(timestamp),
      'X-TC-Region': credentials.region,
    };
    let status: number;
    let raw: string;
    try {
      const response = await fetchImpl(new URL('/', url).toString(), {
        method: 'POST',
        headers,
        body: payload,
        signal: AbortSignal.timeout(timeoutMs),
      });
      status = response.status;
      raw = await response.text();
    } catch (err) {
      // Sent or not, the outcome is unknown: retryable, and the queue decides (Tencent has no idempotency key).
      const reason = err instanceof Error ? err.message : String(err);
      return {
        ok: false,
        code: 'ClientError.Network',
        message: `无法连接腾讯云短信服务（${reason}）`,
        retryable: true,
        requestId: null,
      };
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(raw);
    } catch {
      parsed = null;
    }
    const response = isRecord(parsed) && isRecord(parsed.Response) ? parsed.Response : null;
    if (!response)
      return {
        ok: false,
        code: `ClientError.Http${status}`,
        message: `腾讯云短信服务返回 HTTP ${status}，应答无法解析`,
        retryable: status >= 500 || status === 429,
        requestId: null,
      };
    const requestId = typeof response.RequestId === 'string' ? response.RequestId : null;
    if (isRecord(response.Error)) {
      const code = text(response.Error.Code) || 'InternalError';
      return {
        ok: false,
        code,
        message: tencentErrorMessage(code, text(response.Error.Message)),
        retryable: describeTencentError(code).retryable,
        requestId,
      };
    }
    return { ok: true, response, requestId };
  }

  /** The review and query actions throw: they have no per-item result to carry a failure. */
  async function callOrThrow(action: string, body: Record<string, unknown>) {
    const answer = await call(action, body);
    if (!answer.ok)
      throw new TencentSmsError(answer.code, answer.message, answer.retryable, answer.requestId);
    return answer.response;
  }

  /** One SendSms for up to 200 numbers sharing signature, template and parameters. */
  async function sendOnce(
    templateCode: string,
    items: Omit<SmsSendRequest, 'templateCode'>[],
  ): Promise<SmsSendResult[]> {
    const first = items[0] as Omit<SmsSendRequest, 'templateCode'>;
    await pacer.take();
    const answer = await call('SendSms', {
      PhoneNumberSet: items.map((item) => toE164(item.phone)),
      SmsSdkAppId: credentials.sdkAppId,
      SignName: first.signName,
      TemplateId: templateCode,
      TemplateParamSet: first.params.map((p) => p.value),
      // One SessionContext per request: it carries our id when the request is one message; receipts of
      // a group are matched by SerialNo, which each number gets.
      ...(items.length === 1 ? { SessionContext: first.outId } : {}),
    });
    if (!answer.ok)
      return items.map(() => ({
        ok: false,
        code: answer.code,
        message: answer.message,
        retryable: answer.retryable,
      }));
    const statuses = Array.isArray(answer.response.SendStatusSet)
      ? answer.response.SendStatusSet.filter(isRecord)
      : [];
    const byPhone = new Map<string, Record<string, unknown>[]>();
    for (const status of statuses) {
      const key = toE164(text(status.PhoneNumber));
      byPhone.set(key, [...(byPhone.get(key) ?? []), status]);
    }
    return items.map((item): SmsSendResult => {
      const status = byPhone.get(toE164(item.phone))?.shift();
      if (!status)
        return {
          ok: false,
          code: 'ClientError.MissingStatus',
          message: '腾讯云应答中缺少该号码的发送状态',
          retryable: false,
        };
      const code = text(status.Code);
      if (code === 'Ok') return { ok: true, providerMessageId: text(status.SerialNo) };
      return {
        ok: false,
        code,
        message: tencentErrorMessage(code, text(status.Message)),
        retryable: describeTencentError(code).retryable,
      };
    });
  }

  return {
    kind: 'tencent',
    maxRequestsPerSecond,

    async send(request) {
      const { templateCode, ...item } = request;
      const [result] = await sendOnce(templateCode, [item]);
      return result as SmsSendResult;
    },

    async sendBatch(templateCode, items) {
      // One request carries one signature and one TemplateParamSet for all its numbers: group items
      // that share them, then cut each group into requests of at most 200 distinct numbers.
      const groups = new Map<string, number[]>();
      items.forEach((item, index) => {
        const key = JSON.stringify([item.signName, item.params.map((p) => p.value)]);
        groups.set(key, [...(groups.get(key) ?? []), index]);
      });
      const requests: number[][] = [];
      for (const indexes of groups.values()) {
        let current: number[] = [];
        let phones = new Set<string>();
        for (const index of indexes) {
          const phone = toE164((items[index] as Omit<SmsSendRequest, 'templateCode'>).phone);
          if (current.length === TENCENT_MAX_NUMBERS_PER_SEND || phones.has(phone)) {
            requests.push(current);
            current = [];
            phones = new Set();
          }
          current.push(index);
          phones.add(phone);
        }
        if (current.length > 0) requests.push(current);
      }
      const results = new Array<SmsSendResult>(items.length);
      await Promise.all(
        requests.map(async (indexes) => {
          const sent = await sendOnce(
            templateCode,
            indexes.map((i) => items[i] as Omit<SmsSendRequest, 'templateCode'>),
          );
          indexes.forEach((i, k) => {
            results[i] = sent[k] as SmsSendResult;
          });
        }),
      );
      return results;
    },

    // PullSmsSendStatusByPhoneNumber rather than PullSmsSendStatus: the latter hands out each report
    // once, account-wide, so a poll for one message would consume the others' reports.
    async querySendDetails(phone, providerMessageId, sentAt) {
      const begin = Math.floor(sentAt.getTime() / 1000) - 60;
      const end = Math.min(Math.ceil(clock.now() / 1000), begin + PULL_MAX_DAYS * 86_400);
      const response = await callOrThrow('PullSmsSendStatusByPhoneNumber', {
        BeginTime: begin,
        EndTime: end,
        Offset: 0,
        Limit: PULL_LIMIT,
        PhoneNumber: toE164(phone),
        SmsSdkAppId: credentials.sdkAppId,
      });
      const rows = Array.isArray(response.PullSmsSendStatusSet)
        ? response.PullSmsSendStatusSet.filter(isRecord)
        : [];
      const row = rows.find((r) => text(r.SerialNo) === providerMessageId);
      if (!row || (row.ReportStatus !== 'SUCCESS' && row.ReportStatus !== 'FAIL')) return null;
      const delivered = row.ReportStatus === 'SUCCESS';
      return {
        providerMessageId,
        phone: text(row.SubscriberNumber) || fromE164(text(row.PhoneNumber)),
        outId: text(row.SessionContext) || null,
        status: delivered ? 'delivered' : 'failed',
        errorCode: delivered ? null : 'FAIL',
        errorMessage: delivered ? null : text(row.Description) || null,
        reportedAt: chinaTime(row.UserReceiveTime) ?? new Date(clock.now()),
      };
    },

    async submitSignature(signature) {
      const type = TENCENT_SIGN_TYPE[signature.source];
      if (!type)
        throw new TencentSmsError(
          'ClientError.UnsupportedSignatureSource',
          `腾讯云已不再受理来源为「${SOURCE_ZH[signature.source]}」的国内短信签名，请改用企业或商标`,
          false,
        );
      if (!signature.proof)
        throw new TencentSmsError('ClientError.MissingProof', '腾讯云申请签名须上传资质证明图片', false);
      const response = await callOrThrow('AddSmsSign', {
        SignName: signature.name,
        SignType: type.signType,
        DocumentType: type.documentType,
        International: 0,
        SignPurpose: 0,
        // "去掉前缀data:image/jpeg;base64," before sending.
        ProofImage: signature.proof.base64.replace(/^data:[^,]*,/, ''),
        Remark: signature.remark,
        ...(credentials.qualificationId ? { QualificationId: Number(credentials.qualificationId) } : {}),
      });
      const status = isRecord(response.AddSignStatus) ? response.AddSignStatus : {};
      return { providerRef: text(status.SignId) };
    },

    async querySignature(providerRef) {
      const response = await callOrThrow('DescribeSmsSignList', {
        SignIdSet: [Number(providerRef)],
        International: 0,
      });
      const rows = Array.isArray(response.DescribeSignListStatusSet)
        ? response.DescribeSignListStatusSet.filter(isRecord)
        : [];
      const row = rows.find((r) => text(r.SignId) === providerRef);
      if (!row) throw new TencentSmsError('FailedOperation.SignIdNotExist', '签名 ID 不存在', false);
      return reviewState(row.StatusCode, row.ReviewReply);
    },

    async submitTemplate(template) {
      const response = await callOrThrow('AddSmsTemplate', {
        TemplateName: template.name,
        TemplateContent: toTencentTemplateContent(template.content),
        SmsType: TENCENT_SMS_TYPE[template.type],
        International: 0,
        Remark: template.remark,
      });
      const status = isRecord(response.AddTemplateStatus) ? response.AddTemplateStatus : {};
      return { providerRef: text(status.TemplateId) };
    },

    async queryTemplate(providerRef) {
      const response = await callOrThrow('DescribeSmsTemplateList', {
        TemplateIdSet: [Number(providerRef)],
        International: 0,
      });
      const rows = Array.isArray(response.DescribeTemplateStatusSet)
        ? response.DescribeTemplateStatusSet.filter(isRecord)
        : [];
      const row = rows.find((r) => text(r.TemplateId) === providerRef);
      if (!row) throw new TencentSmsError('FailedOperation.TemplateIdNotExist', '模板 ID 不存在', false);
      return reviewState(row.StatusCode, row.ReviewReply);
    },
  };
}

/** What Tencent expects back from a callback it should not push again. */
export const TENCENT_PUSH_OK = { result: 0, errmsg: 'OK' } as const;

/**
 * Tencent's pushes: 短信下发状态回调 (a JSON array of {user_receive_time, nationcode, mobile,
 * report_status SUCCESS|FAIL, errmsg, description, sid, ext?}) and 短信回复 (one {extend, mobile, nationcode, sign,
 * text, time}), as configured under 回调配置 (https://cloud.tencent.com/document/product/382/37809).
 * Both want `{"result":0,"errmsg":"OK"}`; anything else makes Tencent push again, which a body we
 * cannot read deserves (400 with result 1).
 */
export function parseTencentPush(kind: 'status' | 'reply', body: unknown): SmsPushParse {
  let value = body;
  if (typeof value === 'string' || Buffer.isBuffer(value)) {
    try {
      value = JSON.parse(value.toString());
    } catch {
      value = undefined;
    }
  }
  const refuse = (errmsg: string): SmsPushParse => ({
    receipts: [],
    replies: [],
    answer: { status: 400, body: { result: 1, errmsg } },
  });
  const ok = (receipts: SmsDeliveryReceipt[], replies: SmsInboundReply[]): SmsPushParse => ({
    receipts,
    replies,
    answer: { status: 200, body: TENCENT_PUSH_OK },
  });

  if (kind === 'status') {
    const items = Array.isArray(value) ? value : isRecord(value) ? [value] : null;
    if (!items) return refuse('invalid status callback body');
    const receipts: SmsDeliveryReceipt[] = [];
    for (const item of items) {
      if (!isRecord(item) || !text(item.sid) || !text(item.mobile)) continue;
      const delivered = item.report_status === 'SUCCESS';
      if (!delivered && item.report_status !== 'FAIL') continue;
      receipts.push({
        providerMessageId: text(item.sid),
        phone: text(item.mobile),
        // SessionContext comes back as `ext` when the account has it enabled.
        outId: typeof item.ext === 'string' && item.ext ? item.ext : null,
        status: delivered ? 'delivered' : 'failed',
        errorCode: delivered ? null : text(item.errmsg) || null,
        errorMessage: delivered ? null : text(item.description) || null,
        reportedAt: chinaTime(item.user_receive_time) ?? new Date(),
      });
    }
    return ok(receipts, []);
  }

  const items = Array.isArray(value) ? value : isRecord(value) ? [value] : null;
  if (!items) return refuse('invalid reply callback body');
  const replies: SmsInboundReply[] = [];
  for (const item of items) {
    if (!isRecord(item) || !text(item.mobile) || typeof item.text !== 'string') continue;
    replies.push({
      phone: text(item.mobile),
      content: item.text,
      receivedAt: chinaTime(item.time) ?? new Date(),
      signName: text(item.sign) || null,
    });
  }
  return ok([], replies);
}
