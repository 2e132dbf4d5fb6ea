import { createHash, createHmac, randomUUID, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * Test support: a local stand-in for Tencent Cloud SMS API 3.0 (sms 2021-01-11) answering as the
 * real one does for a client. Every request is authenticated as Tencent does it, recomputed here
 * from what arrived (not shared with the client's signer): the Authorization header's credential
 * scope and signed headers, the UTC date of X-TC-Timestamp, a 5-minute clock skew, the canonical
 * request over the received Content-Type, Host and body, the key derived from "TC3" + SecretKey.
 * Answers are HTTP 200 with `{"Response": {..., "RequestId"}}` or `{"Response": {"Error": {Code,
 * Message}, "RequestId"}}`; a send's per-number failures sit in SendStatusSet's Code.
 *
 * Actions: SendSms, PullSmsSendStatusByPhoneNumber, AddSmsSign, DescribeSmsSignList,
 * AddSmsTemplate, DescribeSmsTemplateList. Tests can make the next request fail with any code,
 * a number fail inside SendStatusSet, the next requests be throttled (RequestLimitExceeded) or
 * answer HTTP 500, and set review and delivery outcomes. Every request is recorded.
 */

export interface TencentSmsServerOptions {
  secretId: string;
  secretKey: string;
  sdkAppId: string;
  /** Wall clock for the timestamp check (default Date.now). */
  now?: () => number;
}

export interface TencentSmsRecordedRequest {
  action: string;
  headers: http.IncomingHttpHeaders;
  body: Record<string, unknown>;
  /** The verdict: null when accepted, else the error code answered. */
  error: string | null;
}

export interface SentMessage {
  serialNo: string;
  phone: string;
  sessionContext: string;
  sentAt: number;
  report: { status: 'SUCCESS' | 'FAIL'; description: string; receivedAt: number } | null;
}

interface Review {
  id: number;
  name: string;
  statusCode: number;
  reviewReply: string;
  body: Record<string, unknown>;
}

const ACTIONS = new Set([
  'SendSms',
  'PullSmsSendStatusByPhoneNumber',
  'AddSmsSign',
  'DescribeSmsSignList',
  'AddSmsTemplate',
  'DescribeSmsTemplateList',
]);

const sha256Hex = (text: string | Buffer) => createHash('sha256').update(text).digest('hex');
const hmac = (key: string | Buffer, text: string) => createHmac('sha256', key).update(text, 'utf8').digest();

class Refusal extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export class TencentSmsServer {
  readonly requests: TencentSmsRecordedRequest[] = [];
  readonly sent: SentMessage[] = [];
  readonly signs = new Map<number, Review>();
  readonly templates = new Map<number, Review>();
  private readonly server: http.Server;
  private readonly now: () => number;
  private nextErrors: { code: string; message: string }[] = [];
  private numberErrors = new Map<string, { code: string; message: string }>();
  private throttled = 0;
  private serverErrors = 0;
  private serial = 0;
  private ids = 1000;

  private constructor(private readonly options: TencentSmsServerOptions) {
    this.now = options.now ?? Date.now;
    this.server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => this.handle(req, Buffer.concat(chunks), res));
    });
  }

  static async start(options: TencentSmsServerOptions): Promise<TencentSmsServer> {
    const server = new TencentSmsServer(options);
    await new Promise<void>((resolve) => server.server.listen(0, '127.0.0.1', resolve));
    return server;
  }

  get baseUrl(): string {
    const { port } = this.server.address() as AddressInfo;
    return `http://127.0.0.1:${port}`;
  }

  /** The next request answers this error (after authentication, as Tencent's business errors do). */
  failNext(code: string, message = `mock ${code}`) {
    this.nextErrors.push({ code, message });
  }

  /** Sends to this number (11 digits or E.164) fail inside SendStatusSet with this code. */
  failNumber(phone: string, code: string, message = `mock ${code}`) {
    this.numberErrors.set(phone.replace(/^\+86/, ''), { code, message });
  }

  /** The next `count` requests are over the account's rate: RequestLimitExceeded. */
  throttleNext(count = 1) {
    this.throttled += count;
  }

  /** The next `count` requests get an HTTP 500 with a non-JSON body (a gateway fault). */
  serverErrorNext(count = 1) {
    this.serverErrors += count;
  }

  /** Sets the carrier's report of a sent message, for PullSmsSendStatusByPhoneNumber. */
  report(serialNo: string, status: 'SUCCESS' | 'FAIL', description: string, receivedAt = this.now()) {
    const message = this.sent.find((m) => m.serialNo === serialNo);
    if (!message) throw new Error(`no message ${serialNo}`);
    message.report = { status, description, receivedAt };
  }

  /**
   * The body Tencent's 短信下发状态回调 would POST for these reported messages: a JSON array, times in
   * China time as "YYYY-MM-DD HH:mm:ss", SessionContext echoed as `ext`.
   */
  statusCallbackBody(serialNos: string[]): string {
    const chinaTime = (ms: number) =>
      new Date(ms + 8 * 3_600_000).toISOString().slice(0, 19).replace('T', ' ');
    return JSON.stringify(
      serialNos.map((serialNo) => {
        const m = this.sent.find((x) => x.serialNo === serialNo);
        if (!m?.report) throw new Error(`no report for ${serialNo}`);
        return {
          user_receive_time: chinaTime(m.report.receivedAt),
          nationcode: '86',
          mobile: m.phone,
          report_status: m.report.status,
          errmsg: m.report.status === 'SUCCESS' ? 'DELIVRD' : m.report.description.split(' ')[0],
          description: m.report.description,
          sid: m.serialNo,
          ...(m.sessionContext ? { ext: m.sessionContext } : {}),
        };
      }),
    );
  }

  review(kind: 'sign' | 'template', id: number, statusCode: number, reviewReply = '') {
    const entry = (kind === 'sign' ? this.signs : this.templates).get(id);
    if (!entry) throw new Error(`no ${kind} ${id}`);
    entry.statusCode = statusCode;
    entry.reviewReply = reviewReply;
  }

  /** The requests of one action that were accepted. */
  accepted(action: string) {
    return this.requests.filter((r) => r.action === action && r.error === null);
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  private handle(req: http.IncomingMessage, raw: Buffer, res: http.ServerResponse) {
    const requestId = randomUUID();
    const action = String(req.headers['x-tc-action'] ?? '');
    let body: Record<string, unknown> = {};
    const record: TencentSmsRecordedRequest = { action, headers: req.headers, body, error: null };
    this.requests.push(record);
    const answer = (response: Record<string, unknown>) => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ Response: { ...response, RequestId: requestId } }));
    };
    const refuse = (code: string, message: string) => {
      record.error = code;
      answer({ Error: { Code: code, Message: message } });
    };
    if (this.serverErrors > 0) {
      this.serverErrors--;
      record.error = 'HTTP 500';
      res.writeHead(500, { 'Content-Type': 'text/html' });
      res.end('<html><body>502 Bad Gateway</body></html>');
      return;
    }
    try {
      this.authenticate(req, raw);
      if (req.headers['x-tc-version'] !== '2021-01-11')
        throw new Refusal('NoSuchVersion', 'The requested version does not exist.');
      if (!ACTIONS.has(action)) throw new Refusal('InvalidAction', `The action ${action} does not exist.`);
      if (!req.headers['x-tc-region'])
        throw new Refusal('MissingParameter', 'The parameter `Region` is missing.');
      try {
        const parsed: unknown = JSON.parse(raw.toString('utf8'));
        if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
          throw new Error('not an object');
        body = parsed as Record<string, unknown>;
        record.body = body;
      } catch {
        throw new Refusal('FailedOperation.JsonParseFail', 'The request body is not JSON.');
      }
      if (this.throttled > 0) {
        this.throttled--;
        throw new Refusal('RequestLimitExceeded', 'Your current request rate exceeds the limit.');
      }
      const next = this.nextErrors.shift();
      if (next) throw new Refusal(next.code, next.message);
      answer(this.act(action, body));
    } catch (err) {
      if (err instanceof Refusal) refuse(err.code, err.message);
      else refuse('InternalError', err instanceof Error ? err.message : String(err));
    }
  }

  /** Tencent's checks, in its order: the header's shape, the key, the time, then the signature. */
  private authenticate(req: http.IncomingMessage, raw: Buffer) {
    const authorization = String(req.headers.authorization ?? '');
    const match =
      /^TC3-HMAC-SHA256 Credential=([^/]+)\/(\d{4}-\d{2}-\d{2})\/([^/]+)\/tc3_request, SignedHeaders=([a-z0-9;-]+), Signature=([0-9a-f]{64})$/.exec(
        authorization,
      );
    if (!match)
      throw new Refusal('AuthFailure.InvalidAuthorization', 'The Authorization header is malformed.');
    const [, secretId, date, service, signedHeaders, signature] = match as unknown as string[];
    if (secretId !== this.options.secretId)
      throw new Refusal('AuthFailure.SecretIdNotFound', 'The SecretId is not found.');
    const timestamp = Number(req.headers['x-tc-timestamp']);
    if (!Number.isInteger(timestamp))
      throw new Refusal('MissingParameter', 'The parameter `Timestamp` is missing.');
    if (Math.abs(this.now() / 1000 - timestamp) > 300)
      throw new Refusal('AuthFailure.SignatureExpire', 'The signature has expired.');
    if (service !== 'sms' || date !== new Date(timestamp * 1000).toISOString().slice(0, 10))
      throw new Refusal('AuthFailure.SignatureFailure', 'The credential scope does not match the request.');
    const names = (signedHeaders as string).split(';');
    if (!names.includes('content-type') || !names.includes('host'))
      throw new Refusal('AuthFailure.SignatureFailure', 'content-type and host must be signed.');
    const canonicalHeaders = names
      .map(
        (name) =>
          `${name}:${String(req.headers[name] ?? '')
            .trim()
            .toLowerCase()}\n`,
      )
      .join('');
    const canonicalRequest = ['POST', '/', '', canonicalHeaders, signedHeaders, sha256Hex(raw)].join('\n');
    const stringToSign = [
      'TC3-HMAC-SHA256',
      String(timestamp),
      `${date}/${service}/tc3_request`,
      sha256Hex(canonicalRequest),
    ].join('\n');
    const key = hmac(
      hmac(hmac(`TC3${this.options.secretKey}`, date as string), service as string),
      'tc3_request',
    );
    const expected = createHmac('sha256', key).update(stringToSign, 'utf8').digest();
    const given = Buffer.from(signature as string, 'hex');
    if (req.method !== 'POST' || given.length !== expected.length || !timingSafeEqual(given, expected))
      throw new Refusal('AuthFailure.SignatureFailure', 'The provided credentials could not be validated.');
  }

  private act(action: string, body: Record<string, unknown>): Record<string, unknown> {
    const appIdMatches = () => {
      if (body.SmsSdkAppId !== this.options.sdkAppId)
        throw new Refusal('InvalidParameterValue.SdkAppIdNotExist', 'SdkAppId not exist.');
    };
    switch (action) {
      case 'SendSms': {
        appIdMatches();
        const phones = Array.isArray(body.PhoneNumberSet) ? body.PhoneNumberSet.map(String) : [];
        if (phones.length === 0)
          throw new Refusal('MissingParameter.EmptyPhoneNumberSet', 'PhoneNumberSet is empty.');
        if (phones.length > 200)
          throw new Refusal(
            'LimitExceeded.PhoneNumberCountLimit',
            'the number of phone numbers exceeds 200.',
          );
        if (!body.SignName) throw new Refusal('MissingParameter', 'The parameter `SignName` is missing.');
        if (!body.TemplateId) throw new Refusal('MissingParameter', 'The parameter `TemplateId` is missing.');
        const sessionContext = typeof body.SessionContext === 'string' ? body.SessionContext : '';
        return {
          SendStatusSet: phones.map((phone) => {
            const national = phone.replace(/^\+86/, '');
            const failure = !/^\+86 ?1\d{10}$/.test(phone)
              ? { code: 'InvalidParameterValue.IncorrectPhoneNumber', message: 'incorrect number format' }
              : this.numberErrors.get(national);
            if (failure)
              return {
                SerialNo: '',
                PhoneNumber: phone,
                Fee: 0,
                SessionContext: sessionContext,
                Code: failure.code,
                Message: failure.message,
                IsoCode: 'CN',
              };
            const serialNo = `2433:${(++this.serial).toString(16).padStart(20, '0')}`;
            this.sent.push({ serialNo, phone: national, sessionContext, sentAt: this.now(), report: null });
            return {
              SerialNo: serialNo,
              PhoneNumber: phone,
              Fee: 1,
              SessionContext: sessionContext,
              Code: 'Ok',
              Message: 'send success',
              IsoCode: 'CN',
            };
          }),
        };
      }
      case 'PullSmsSendStatusByPhoneNumber': {
        appIdMatches();
        const begin = Number(body.BeginTime);
        const end = body.EndTime === undefined ? Number.POSITIVE_INFINITY : Number(body.EndTime);
        if (!Number.isInteger(begin))
          throw new Refusal('InvalidParameterValue.BeginTimeVerifyFail', 'BeginTime verify failed.');
        if (Number(body.Limit) > 100 || Number(body.Limit) < 1)
          throw new Refusal('InvalidParameterValue.LimitVerifyFail', 'Limit verify failed.');
        const national = String(body.PhoneNumber ?? '').replace(/^\+86/, '');
        return {
          PullSmsSendStatusSet: this.sent
            .filter(
              (m) =>
                m.phone === national &&
                m.report &&
                Math.floor(m.sentAt / 1000) >= begin &&
                Math.floor(m.sentAt / 1000) <= end,
            )
            .slice(0, Number(body.Limit))
            .map((m) => ({
              UserReceiveTime: Math.floor((m.report?.receivedAt ?? 0) / 1000),
              CountryCode: '86',
              SubscriberNumber: m.phone,
              PhoneNumber: `+86${m.phone}`,
              SerialNo: m.serialNo,
              ReportStatus: m.report?.status,
              Description: m.report?.description,
              SessionContext: m.sessionContext,
            })),
        };
      }
      case 'AddSmsSign':
      case 'AddSmsTemplate': {
        const isSign = action === 'AddSmsSign';
        const name = String((isSign ? body.SignName : body.TemplateName) ?? '');
        if (!name) throw new Refusal('MissingParameter', 'The name is missing.');
        if (isSign && !body.ProofImage)
          throw new Refusal('MissingParameter', 'The parameter `ProofImage` is missing.');
        if (!isSign && ![1, 2, 3].includes(Number(body.SmsType)))
          throw new Refusal('InvalidParameterValue', 'SmsType is invalid.');
        const id = ++this.ids;
        (isSign ? this.signs : this.templates).set(id, { id, name, statusCode: 1, reviewReply: '', body });
        return isSign ? { AddSignStatus: { SignId: id } } : { AddTemplateStatus: { TemplateId: String(id) } };
      }
      case 'DescribeSmsSignList':
      case 'DescribeSmsTemplateList': {
        const isSign = action === 'DescribeSmsSignList';
        const ids = (
          Array.isArray(isSign ? body.SignIdSet : body.TemplateIdSet)
            ? ((isSign ? body.SignIdSet : body.TemplateIdSet) as unknown[])
            : []
        ).map(Number);
        const rows = ids.flatMap((id) => {
          const entry = (isSign ? this.signs : this.templates).get(id);
          if (!entry) return [];
          return [
            isSign
              ? {
                  SignId: id,
                  International: 0,
                  StatusCode: entry.statusCode,
                  ReviewReply: entry.reviewReply,
                  SignName: entry.name,
                  CreateTime: 0,
                }
              : {
                  TemplateId: id,
                  International: 0,
                  StatusCode: entry.statusCode,
                  ReviewReply: entry.reviewReply,
                  TemplateName: entry.name,
                  CreateTime: 0,
                },
          ];
        });
        return isSign ? { DescribeSignListStatusSet: rows } : { DescribeTemplateStatusSet: rows };
      }
      default:
        throw new Refusal('InvalidAction', `The action ${action} does not exist.`);
    }
  }
}
