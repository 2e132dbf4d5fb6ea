import { createHash, createHmac, randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * Test support: a local stand-in for Aliyun SMS (dysmsapi.aliyuncs.com, API version 2017-05-25)
 * speaking what the vendor documents:
 *
 * - The V3 signature (ACS3-HMAC-SHA256) is recomputed here from the request as received, with its
 *   own canonicalisation (not the client's), and compared; x-acs-content-sha256 must be the body's
 *   hash, x-acs-date within 15 minutes, each x-acs-signature-nonce used once. Gateway failures
 *   answer `{ RequestId, HostId, Code, Message, Recommend }` with the documented status
 *   (SignatureDoesNotMatch 400, InvalidAccessKeyId.NotFound 404, Throttling.User 400, ...).
 * - Actions (RPC style, parameters in the query string, SendBatchSms' arrays in a form body): SendSms, SendBatchSms (≤ 100 numbers),
 *   QuerySendDetails, CreateSmsSign / GetSmsSign, CreateSmsTemplate / GetSmsTemplate. Business
 *   errors answer HTTP 200 with `Code` ≠ OK, as the service does.
 *
 * - GetOSSInfoForUploadFile hands out an OSS PostObject policy signed with an upload key; the OSS
 *   stand-in at `/oss` checks that signature and the key prefix as OSS does, and CreateSmsSign
 *   accepts in MoreData only keys that were uploaded.
 *
 * Tests steer it: `failNext` answers the next request with a given code (and status), `deliver`
 * sets a message's carrier outcome, `review` decides a signature or template, and `reportPush`
 * builds the body Aliyun would push for delivered messages (HTTP batch push, SmsReport).
 */

export interface AliyunSmsRequestRecord {
  action: string;
  params: Record<string, string>;
  headers: http.IncomingHttpHeaders;
  status: number;
  code: string;
}

export interface AliyunSentMessage {
  bizId: string;
  phone: string;
  signName: string;
  templateCode: string;
  params: Record<string, string>;
  outId: string | null;
  sentAt: number;
  /** 1 等待回执, 2 发送失败, 3 发送成功 (QuerySendDetails' SendStatus). */
  sendStatus: 1 | 2 | 3;
  errCode: string;
  receivedAt: number | null;
}

export interface FakeAliyunSmsOptions {
  accessKeys: Record<string, string>;
  /** Approved signatures that SendSms accepts. */
  signatures?: string[];
  /** Approved templates by code, with their content (variables are checked against it). */
  templates?: Record<string, string>;
  now?: () => number;
}

export interface FakeAliyunSms {
  baseUrl: string;
  requests: AliyunSmsRequestRecord[];
  messages: AliyunSentMessage[];
  signatures: Map<string, { status: number; reason: string; moreData: string[] }>;
  /** Files posted to the OSS stand-in, by object key. */
  uploads: Map<string, Buffer>;
  templates: Map<string, { content: string; status: number; reason: string }>;
  failNext(fault: { code: string; message?: string; status?: number }): void;
  deliver(bizId: string, phone: string, outcome: { success: boolean; errCode?: string }): void;
  review(kind: 'sign' | 'template', ref: string, status: 0 | 1 | 2 | 10, reason?: string): void;
  reportPush(): Record<string, unknown>[];
  close(): Promise<void>;
}

const WINDOW_MS = 15 * 60_000;

/** RFC 3986 unreserved characters stay, everything else is %XX of its UTF-8 bytes. */
function rfc3986(text: string): string {
  let out = '';
  for (const byte of Buffer.from(text, 'utf8')) {
    const c = String.fromCharCode(byte);
    out += /[A-Za-z0-9\-_.~]/.test(c) ? c : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

function decodePairs(raw: string): [string, string][] {
  if (!raw) return [];
  return raw.split('&').map((pair) => {
    const at = pair.indexOf('=');
    const name = at < 0 ? pair : pair.slice(0, at);
    const value = at < 0 ? '' : pair.slice(at + 1);
    return [decodeURIComponent(name), decodeURIComponent(value)];
  });
}

const chinaTime = (ms: number) =>
  new Date(ms + 8 * 3600_000)
    .toISOString()
    .replace('T', ' ')
    .replace(/\.\d{3}Z$/, '');
const chinaDay = (ms: number) => chinaTime(ms).slice(0, 10).replace(/-/g, '');

export async function startFakeAliyunSms(options: FakeAliyunSmsOptions): Promise<FakeAliyunSms> {
  const now = options.now ?? Date.now;
  const requests: AliyunSmsRequestRecord[] = [];
  const messages: AliyunSentMessage[] = [];
  const signatures = new Map<string, { status: number; reason: string; moreData: string[] }>(
    (options.signatures ?? []).map((name) => [name, { status: 1, reason: '', moreData: [] }]),
  );
  const uploads = new Map<string, Buffer>();
  const OSS_KEY_ID = 'LTAI5tOssUploadKey0001';
  const OSS_SECRET = 'oss-upload-secret';
  const OSS_START_PATH = '1234567890';
  const templates = new Map<string, { content: string; status: number; reason: string }>(
    Object.entries(options.templates ?? {}).map(([code, content]) => [
      code,
      { content, status: 1, reason: '' },
    ]),
  );
  const faults: { code: string; message?: string; status?: number }[] = [];
  const usedNonces = new Set<string>();
  let baseUrl = '';
  let counter = 0;

  const verify = (
    req: http.IncomingMessage,
    rawQuery: string,
    body: Buffer,
  ): { status: number; code: string; message: string } | null => {
    const auth = req.headers.authorization ?? '';
    const m = /^ACS3-HMAC-SHA256 Credential=([^,]+),SignedHeaders=([^,]+),Signature=([0-9a-f]{64})$/.exec(
      auth,
    );
    if (!m)
      return {
        status: 400,
        code: 'IncompleteSignature',
        message: 'The request signature does not conform to Aliyun standards.',
      };
    const [, keyId, signedList, signature] = m as unknown as [string, string, string, string];
    const secret = options.accessKeys[keyId];
    if (secret === undefined)
      return {
        status: 404,
        code: 'InvalidAccessKeyId.NotFound',
        message: 'Specified access key is not found.',
      };
    const date = String(req.headers['x-acs-date'] ?? '');
    if (!/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/.test(date))
      return {
        status: 400,
        code: 'InvalidTimeStamp.Format',
        message: 'Specified time stamp or date value is not well formatted.',
      };
    if (Math.abs(Date.parse(date) - now()) > WINDOW_MS)
      return {
        status: 400,
        code: 'InvalidTimeStamp.Expired',
        message: 'Specified time stamp or date value is expired.',
      };
    const hashedPayload = createHash('sha256').update(body).digest('hex');
    if (req.headers['x-acs-content-sha256'] !== hashedPayload)
      return {
        status: 400,
        code: 'SignatureDoesNotMatch',
        message: 'Specified content sha256 is not matched with our calculation.',
      };
    const signed = signedList.split(';');
    for (const required of [
      'host',
      'x-acs-action',
      'x-acs-version',
      'x-acs-date',
      'x-acs-signature-nonce',
      'x-acs-content-sha256',
    ]) {
      if (!signed.includes(required))
        return { status: 400, code: 'IncompleteSignature', message: `Header ${required} must be signed.` };
    }
    const canonicalHeaders = signed
      .map((name) => `${name}:${String(req.headers[name] ?? '').trim()}\n`)
      .join('');
    const canonicalQuery = decodePairs(rawQuery)
      .map(([n, v]) => [rfc3986(n), rfc3986(v)] as const)
      .sort(([a, x], [b, y]) => (a === b ? (x < y ? -1 : 1) : a < b ? -1 : 1))
      .map(([n, v]) => `${n}=${v}`)
      .join('&');
    const canonical = ['POST', '/', canonicalQuery, canonicalHeaders, signedList, hashedPayload].join('\n');
    const toSign = `ACS3-HMAC-SHA256\n${createHash('sha256').update(canonical).digest('hex')}`;
    const expected = createHmac('sha256', secret).update(toSign).digest('hex');
    if (expected !== signature)
      return {
        status: 400,
        code: 'SignatureDoesNotMatch',
        message: `Specified signature is not matched with our calculation. server string to sign is:${toSign}`,
      };
    const nonce = String(req.headers['x-acs-signature-nonce'] ?? '');
    if (usedNonces.has(nonce))
      return {
        status: 400,
        code: 'SignatureNonceUsed',
        message: 'Specified signature nonce was used already.',
      };
    usedNonces.add(nonce);
    return null;
  };

  const bizId = () => `${String(++counter).padStart(6, '0')}${now()}^0`;

  type Answer = { status: number; body: Record<string, unknown> };
  const ok = (extra: Record<string, unknown> = {}): Answer => ({
    status: 200,
    body: { RequestId: randomUUID().toUpperCase(), Code: 'OK', Message: 'OK', ...extra },
  });
  const business = (code: string, message: string): Answer => ({
    status: 200,
    body: { RequestId: randomUUID().toUpperCase(), Code: code, Message: message },
  });

  const checkSend = (
    phone: string,
    signName: string,
    templateCode: string,
    params: Record<string, string>,
  ) => {
    if (!/^(\+?86|0086)?1\d{10}$/.test(phone)) return business('isv.MOBILE_NUMBER_ILLEGAL', '非法手机号');
    if (signatures.get(signName)?.status !== 1)
      return business('isv.SMS_SIGNATURE_ILLEGAL', '该账号下找不到对应签名');
    const template = templates.get(templateCode);
    if (template?.status !== 1) return business('isv.SMS_TEMPLATE_ILLEGAL', '该账号下找不到对应模板');
    for (const [, name] of template.content.matchAll(/\$\{([^}]+)\}/g)) {
      if (typeof params[name as string] !== 'string')
        return business('isv.TEMPLATE_MISSING_PARAMETERS', '模板缺少变量');
    }
    if (Object.values(params).some((v) => typeof v !== 'string'))
      return business('isv.INVALID_JSON_PARAM', 'JSON参数不合法，只接受字符串值');
    return null;
  };

  const record = (
    id: string,
    phone: string,
    signName: string,
    templateCode: string,
    params: Record<string, string>,
    outId: string | null,
  ) =>
    messages.push({
      bizId: id,
      phone,
      signName,
      templateCode,
      params,
      outId,
      sentAt: now(),
      sendStatus: 1,
      errCode: '',
      receivedAt: null,
    });

  const json = (text: string | undefined): unknown => {
    try {
      return text === undefined ? undefined : JSON.parse(text);
    } catch {
      return null;
    }
  };

  const actions: Record<string, (p: Record<string, string>) => Answer> = {
    SendSms(p) {
      const params = p.TemplateParam ? json(p.TemplateParam) : {};
      if (!params || typeof params !== 'object' || Array.isArray(params))
        return business('isv.INVALID_JSON_PARAM', 'JSON参数不合法，只接受字符串值');
      const phones = (p.PhoneNumbers ?? '').split(',');
      if (phones.length > 1000) return business('isv.MOBILE_COUNT_OVER_LIMIT', '手机号码数量超过限制');
      for (const phone of phones) {
        const bad = checkSend(
          phone,
          p.SignName ?? '',
          p.TemplateCode ?? '',
          params as Record<string, string>,
        );
        if (bad) return bad;
      }
      const id = bizId();
      for (const phone of phones)
        record(
          id,
          phone,
          p.SignName ?? '',
          p.TemplateCode ?? '',
          params as Record<string, string>,
          p.OutId ?? null,
        );
      return ok({ BizId: id });
    },
    SendBatchSms(p) {
      const phones = json(p.PhoneNumberJson);
      const signs = json(p.SignNameJson);
      const params = p.TemplateParamJson === undefined ? undefined : json(p.TemplateParamJson);
      if (!Array.isArray(phones) || !Array.isArray(signs) || (params !== undefined && !Array.isArray(params)))
        return business('isv.INVALID_JSON_PARAM', 'JSON参数不合法，只接受字符串值');
      if (phones.length > 100) return business('isv.MOBILE_COUNT_OVER_LIMIT', '手机号码数量超过限制');
      if (signs.length !== phones.length || (Array.isArray(params) && params.length !== phones.length))
        return business('isv.INVALID_PARAMETERS', '参数异常');
      for (let i = 0; i < phones.length; i++) {
        const bad = checkSend(
          String(phones[i]),
          String(signs[i]),
          p.TemplateCode ?? '',
          (params?.[i] ?? {}) as Record<string, string>,
        );
        if (bad) return bad;
      }
      const id = bizId();
      phones.forEach((phone, i) => {
        const itemParams = (params?.[i] ?? {}) as Record<string, string>;
        record(id, String(phone), String(signs[i]), p.TemplateCode ?? '', itemParams, p.OutId ?? null);
      });
      return ok({ BizId: id });
    },
    QuerySendDetails(p) {
      if (!p.PhoneNumber) return business('isv.INVALID_PARAMETERS', 'PhoneNumber is mandatory');
      if (!/^\d{8}$/.test(p.SendDate ?? ''))
        return business('isv.INVALID_PARAMETERS', 'SendDate 格式应为 yyyyMMdd');
      const size = Number(p.PageSize);
      if (!(size >= 1 && size <= 50)) return business('isv.INVALID_PARAMETERS', 'PageSize 取值 1~50');
      const found = messages.filter(
        (m) =>
          m.phone === p.PhoneNumber && (!p.BizId || m.bizId === p.BizId) && chinaDay(m.sentAt) === p.SendDate,
      );
      return ok({
        TotalCount: String(found.length),
        SmsSendDetailDTOs: {
          SmsSendDetailDTO: found.map((m) => ({
            PhoneNum: m.phone,
            SendStatus: m.sendStatus,
            ErrCode: m.errCode,
            TemplateCode: m.templateCode,
            Content: `【${m.signName}】${templates.get(m.templateCode)?.content.replace(/\$\{([^}]+)\}/g, (_, n: string) => m.params[n] ?? '') ?? ''}`,
            SendDate: chinaTime(m.sentAt),
            ReceiveDate: m.receivedAt === null ? '' : chinaTime(m.receivedAt),
            OutId: m.outId ?? '',
          })),
        },
      });
    },
    CreateSmsSign(p) {
      if (!p.SignName || !/^[\p{Script=Han}A-Za-z0-9]{2,12}$/u.test(p.SignName))
        return business('isv.SIGN_NAME_ILLEGAL', '签名名称不合法');
      if (!['0', '2', '5'].includes(p.SignSource ?? ''))
        return business('isv.INVALID_PARAMETERS', 'SignSource 取值不合法');
      if (!p.QualificationId)
        return business('isv.INVALID_PARAMETERS', 'QualificationId is mandatory for this action.');
      const moreData = p.MoreData === undefined ? [] : json(p.MoreData);
      if (!Array.isArray(moreData) || moreData.some((key) => !uploads.has(String(key))))
        return business('isv.INVALID_PARAMETERS', 'MoreData 中的文件不存在');
      signatures.set(p.SignName, { status: 0, reason: '', moreData: moreData.map(String) });
      return ok({ SignName: p.SignName, OrderId: String(2_000_000 + counter++) });
    },
    GetOSSInfoForUploadFile(p) {
      if ((p.BizType ?? 'fcMediaSms') !== 'fcMediaSms')
        return business('isv.INVALID_PARAMETERS', 'BizType 取值不合法');
      const expiration = new Date(now() + 3600_000).toISOString();
      const conditions = [
        ['content-length-range', 0, 1_048_576_000],
        ['starts-with', '$key', OSS_START_PATH],
      ];
      const policy = Buffer.from(JSON.stringify({ expiration, conditions })).toString('base64');
      return ok({
        Model: {
          AccessKeyId: OSS_KEY_ID,
          Policy: policy,
          Signature: createHmac('sha1', OSS_SECRET).update(policy).digest('base64'),
          Host: `${baseUrl}/oss`,
          StartPath: OSS_START_PATH,
          ExpireTime: String(Math.floor(now() / 1000) + 3600),
        },
      });
    },
    GetSmsSign(p) {
      const sign = signatures.get(p.SignName ?? '');
      if (!sign) return business('isv.SMS_SIGN_NOT_EXIST', '签名不存在');
      return ok({
        SignName: p.SignName,
        SignStatus: sign.status,
        AuditInfo: { RejectInfo: sign.reason, AuditDate: chinaTime(now()) },
      });
    },
    CreateSmsTemplate(p) {
      if (!p.TemplateName || !p.TemplateContent) return business('isv.INVALID_PARAMETERS', '参数异常');
      if (!['0', '1', '2', '3'].includes(p.TemplateType ?? ''))
        return business('isv.INVALID_PARAMETERS', 'TemplateType 取值不合法');
      if (p.TemplateType !== '3' && !p.RelatedSignName)
        return business('isv.INVALID_PARAMETERS', 'RelatedSignName is mandatory for this action.');
      if (/\$\{/.test(p.TemplateContent) && !p.TemplateRule)
        return business('isv.INVALID_PARAMETERS', 'TemplateRule is mandatory for this action.');
      const code = `SMS_${String(460_000_000 + ++counter)}`;
      templates.set(code, { content: p.TemplateContent, status: 0, reason: '' });
      return ok({ TemplateCode: code, TemplateName: p.TemplateName, OrderId: String(2_000_000 + counter) });
    },
    GetSmsTemplate(p) {
      const template = templates.get(p.TemplateCode ?? '');
      if (!template) return business('isv.SMS_TPL_NOT_EXIST', '模板不存在');
      return ok({
        TemplateCode: p.TemplateCode,
        TemplateContent: template.content,
        TemplateStatus: String(template.status),
        AuditInfo: { RejectInfo: template.reason, AuditDate: chinaTime(now()) },
      });
    },
  };

  /** OSS PostObject as OSS checks it: the policy's signature with the uploader's key, then the key's prefix. */
  const ossPostObject = async (
    req: http.IncomingMessage,
    body: Buffer,
  ): Promise<{ status: number; text: string }> => {
    const ossError = (status: number, code: string) => ({
      status,
      text: `<Error><Code>${code}</Code></Error>`,
    });
    let form: FormData;
    try {
      form = await new Response(body, {
        headers: { 'content-type': String(req.headers['content-type'] ?? '') },
      }).formData();
    } catch {
      return ossError(400, 'MalformedPOSTRequest');
    }
    const field = (name: string) => {
      const value = form.get(name);
      return typeof value === 'string' ? value : '';
    };
    if (field('OSSAccessKeyId') !== OSS_KEY_ID) return ossError(403, 'InvalidAccessKeyId');
    const expected = createHmac('sha1', OSS_SECRET).update(field('policy')).digest('base64');
    if (field('Signature') !== expected) return ossError(403, 'SignatureDoesNotMatch');
    if (!field('key').startsWith(OSS_START_PATH)) return ossError(403, 'AccessDenied');
    const file = form.get('file');
    if (!file || typeof file === 'string') return ossError(400, 'InvalidArgument');
    uploads.set(field('key'), Buffer.from(await file.arrayBuffer()));
    return { status: field('success_action_status') === '200' ? 200 : 204, text: '' };
  };

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const url = req.url ?? '/';
      const at = url.indexOf('?');
      const rawQuery = at < 0 ? '' : url.slice(at + 1);
      const path = at < 0 ? url : url.slice(0, at);
      const action = String(req.headers['x-acs-action'] ?? '');
      let params: Record<string, string> = {};
      try {
        const form = String(req.headers['content-type'] ?? '').startsWith('application/x-www-form-urlencoded')
          ? decodePairs(body.toString('utf8').replace(/\+/g, '%20'))
          : [];
        params = Object.fromEntries([...decodePairs(rawQuery), ...form]);
      } catch {
        params = {};
      }
      const entry: AliyunSmsRequestRecord = { action, params, headers: req.headers, status: 200, code: 'OK' };
      requests.push(entry);
      const send = (answer: Answer) => {
        entry.status = answer.status;
        entry.code = String(answer.body.Code ?? '');
        res.writeHead(answer.status, { 'content-type': 'application/json;charset=utf-8' });
        res.end(JSON.stringify(answer.body));
      };
      const gateway = (status: number, code: string, message: string) =>
        send({
          status,
          body: {
            RequestId: randomUUID().toUpperCase(),
            HostId: 'dysmsapi.aliyuncs.com',
            Code: code,
            Message: message,
            Recommend: `https://api.aliyun.com/troubleshoot?q=${code}&product=Dysmsapi`,
          },
        });
      if (path === '/oss') {
        void ossPostObject(req, body).then(({ status, text }) => {
          entry.action = 'OSS PostObject';
          entry.status = status;
          res.writeHead(status, { 'content-type': 'application/xml' });
          res.end(text);
        });
        return;
      }
      if (req.method !== 'POST' && req.method !== 'GET')
        return gateway(400, 'UnsupportedHTTPMethod', 'This http method not supported.');
      if (path !== '/')
        return gateway(
          404,
          'InvalidApi.NotFound',
          'Specified api is not found, please check your url and method.',
        );
      const refused = verify(req, rawQuery, body);
      if (refused) return gateway(refused.status, refused.code, refused.message);
      if (req.headers['x-acs-version'] !== '2017-05-25')
        return gateway(400, 'InvalidVersion', 'Specified parameter Version is not valid.');
      const handler = actions[action];
      if (!handler)
        return gateway(
          404,
          'InvalidApi.NotFound',
          'Specified api is not found, please check your url and method.',
        );
      const fault = faults.shift();
      if (fault) {
        const status = fault.status ?? 200;
        if (status === 200) return send(business(fault.code, fault.message ?? fault.code));
        return gateway(status, fault.code, fault.message ?? fault.code);
      }
      send(handler(params));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    baseUrl,
    requests,
    messages,
    signatures,
    uploads,
    templates,
    failNext: (fault) => faults.push(fault),
    deliver(id, phone, outcome) {
      const message = messages.find((m) => m.bizId === id && m.phone === phone);
      if (!message) throw new Error(`no message ${id} to ${phone}`);
      message.sendStatus = outcome.success ? 3 : 2;
      message.errCode = outcome.success ? 'DELIVERED' : (outcome.errCode ?? 'UNKNOWN');
      message.receivedAt = now();
    },
    review(kind, ref, status, reason = '') {
      const map = kind === 'sign' ? signatures : templates;
      const entry = map.get(ref);
      if (!entry) throw new Error(`no ${kind} ${ref}`);
      entry.status = status;
      entry.reason = reason;
    },
    reportPush: () =>
      messages
        .filter((m) => m.sendStatus !== 1)
        .map((m) => ({
          phone_number: m.phone,
          send_time: chinaTime(m.sentAt),
          report_time: chinaTime(m.receivedAt ?? m.sentAt),
          success: m.sendStatus === 3,
          err_code: m.errCode,
          err_msg: m.sendStatus === 3 ? '用户接收成功' : '失败',
          sms_size: '1',
          biz_id: m.bizId,
          out_id: m.outId ?? '',
        })),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
