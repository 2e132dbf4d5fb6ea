/**
 * Tencent Cloud SMS error codes (the 错误码 of sms 2021-01-11's actions, e.g. SendSms at
 * https://cloud.tencent.com/document/api/382/55981, the same list as the SDKs' sms/v20210111 SmsErrorCode,
 * and API 3.0's 公共错误码), said in Chinese for the send record's timeline, and whether trying the same
 * message again later can succeed.
 *
 * Retry policy: the client never retries by itself (a retried SendSms may send twice: Tencent has no
 * idempotency key); it reports `retryable` and the sending queue decides when. Retryable are the
 * throttles (the account's API rate, one number's 30-second cap), Tencent's transient faults, and
 * 营销短信 outside Tencent's 08:00–22:00 window; everything else needs a person (balance, review, number).
 */

interface KnownError {
  zh: string;
  retryable: boolean;
}

const KNOWN: Record<string, KnownError> = {
  'AuthFailure.SignatureFailure': { zh: '签名校验失败：请检查 SecretKey', retryable: false },
  'AuthFailure.SignatureExpire': { zh: '签名过期：服务器时间与腾讯云相差超过 5 分钟', retryable: false },
  'AuthFailure.SecretIdNotFound': { zh: 'SecretId 不存在或已停用', retryable: false },
  'AuthFailure.InvalidSecretId': { zh: 'SecretId 无效', retryable: false },
  'AuthFailure.UnauthorizedOperation': { zh: '该密钥无权调用短信接口（CAM 未授权）', retryable: false },
  InternalError: { zh: '腾讯云内部错误', retryable: true },
  InvalidAction: { zh: '接口不存在', retryable: false },
  RequestLimitExceeded: { zh: '请求频率超过腾讯云接口限制', retryable: true },
  'RequestLimitExceeded.UinLimitExceeded': { zh: '账号请求频率超过腾讯云接口限制', retryable: true },
  'RequestLimitExceeded.IPLimitExceeded': { zh: 'IP 请求频率超过腾讯云接口限制', retryable: true },
  'RequestLimitExceeded.GlobalRegionUinLimitExceeded': {
    zh: '账号请求频率超过腾讯云接口限制',
    retryable: true,
  },
  ServiceUnavailable: { zh: '腾讯云短信服务暂时不可用', retryable: true },
  ResourceUnavailable: { zh: '腾讯云短信服务暂时不可用', retryable: true },

  'FailedOperation.ContainSensitiveWord': { zh: '短信内容含有敏感词', retryable: false },
  'FailedOperation.FailResolvePacket': { zh: '请求包解析失败', retryable: false },
  'FailedOperation.InsufficientBalanceInSmsPackage': {
    zh: '短信套餐包余量不足，请购买套餐包',
    retryable: false,
  },
  'FailedOperation.JsonParseFail': { zh: '请求包体解析失败', retryable: false },
  'FailedOperation.MarketingSendTimeConstraint': {
    zh: '营销短信只允许在 8 点到 22 点发送',
    retryable: true,
  },
  'FailedOperation.MissingSignature': { zh: '尚无审核通过的签名，无法申请模板', retryable: false },
  'FailedOperation.NotEnterpriseCertification': {
    zh: '非企业认证账号不能使用签名和模板接口',
    retryable: false,
  },
  'FailedOperation.PhoneNumberInBlacklist': {
    zh: '号码在免打扰名单中（用户退订或运营商免打扰）',
    retryable: false,
  },
  'FailedOperation.PhoneNumberParseFail': { zh: '号码解析失败', retryable: false },
  'FailedOperation.SignatureIncorrectOrUnapproved': { zh: '签名未审核通过或格式错误', retryable: false },
  'FailedOperation.SignNumberLimit': { zh: '签名数量已达上限', retryable: false },
  'FailedOperation.TemplateIncorrectOrUnapproved': { zh: '模板未审核通过或内容不匹配', retryable: false },
  'FailedOperation.TemplateNumberLimit': { zh: '模板数量已达上限', retryable: false },
  'FailedOperation.TemplateParamSetNotMatchApprovedTemplate': {
    zh: '模板变量个数与审核通过的模板不一致',
    retryable: false,
  },
  'FailedOperation.TemplateUnapprovedOrNotExist': { zh: '模板未审核通过或不存在', retryable: false },
  'InternalError.OtherError': { zh: '腾讯云短信其他错误', retryable: false },
  'InternalError.RequestTimeException': { zh: '请求时间异常：服务器时间与腾讯云相差过大', retryable: false },
  'InternalError.SendAndRecvFail': { zh: '腾讯云短信接口超时', retryable: true },
  'InternalError.Timeout': { zh: '请求下发短信超时', retryable: true },
  'InternalError.UnknownError': { zh: '腾讯云短信未知错误', retryable: true },
  'InternalError.ParseBackendResponseFail': { zh: '解析运营商回包失败', retryable: true },
  'InvalidParameterValue.ContentLengthLimit': { zh: '短信内容过长', retryable: false },
  'InvalidParameterValue.IncorrectPhoneNumber': { zh: '手机号格式错误', retryable: false },
  'InvalidParameterValue.ProhibitedUseUrlInTemplateParameter': {
    zh: '模板变量中不允许使用链接',
    retryable: false,
  },
  'InvalidParameterValue.SdkAppIdNotExist': { zh: 'SmsSdkAppId 不存在', retryable: false },
  'InvalidParameterValue.TemplateParameterFormatError': {
    zh: '验证码模板变量只能是 0–6 位纯数字',
    retryable: false,
  },
  'InvalidParameterValue.TemplateParameterLengthLimit': {
    zh: '单个模板变量超过 12 个字符',
    retryable: false,
  },
  'InvalidParameterValue.TemplateWithDirtyWords': { zh: '模板内容含有敏感词', retryable: false },
  'InvalidParameterValue.InvalidTemplateFormat': { zh: '模板格式错误', retryable: false },
  'InvalidParameterValue.ImageInvalid': { zh: '证明材料图片格式错误', retryable: false },
  'InvalidParameterValue.SignExistAndUnapproved': { zh: '已有相同的待审核签名', retryable: false },
  'InvalidParameterValue.SignNameLengthTooLong': { zh: '签名过长', retryable: false },
  'LimitExceeded.AppDailyLimit': { zh: '应用日发送量超过设定上限', retryable: false },
  'LimitExceeded.AppMainlandChinaDailyLimit': { zh: '中国大陆日发送量超过设定上限', retryable: false },
  'LimitExceeded.DailyLimit': { zh: '日发送量超过上限', retryable: false },
  'LimitExceeded.DeliveryFrequencyLimit': { zh: '命中发送频率限制策略', retryable: false },
  'LimitExceeded.PhoneNumberCountLimit': { zh: '单次请求号码超过 200 个', retryable: false },
  'LimitExceeded.PhoneNumberDailyLimit': { zh: '该号码当日接收条数已达上限', retryable: false },
  'LimitExceeded.PhoneNumberOneHourLimit': { zh: '该号码 1 小时内接收条数已达上限', retryable: false },
  'LimitExceeded.PhoneNumberSameContentDailyLimit': {
    zh: '该号码当日接收相同内容已达上限',
    retryable: false,
  },
  'LimitExceeded.PhoneNumberThirtySecondLimit': {
    zh: '该号码 30 秒内接收条数已达上限，稍后再发',
    retryable: true,
  },
  'MissingParameter.EmptyPhoneNumberSet': { zh: '号码列表为空', retryable: false },
  'UnauthorizedOperation.IndividualUserMarketingSmsPermissionDeny': {
    zh: '个人认证用户不能发送营销短信',
    retryable: false,
  },
  'UnauthorizedOperation.RequestIpNotInWhitelist': { zh: '请求 IP 不在白名单中', retryable: false },
  'UnauthorizedOperation.RequestPermissionDeny': { zh: '请求没有权限', retryable: false },
  'UnauthorizedOperation.SdkAppIdIsDisabled': { zh: '该 SmsSdkAppId 已被禁用', retryable: false },
  'UnauthorizedOperation.ServiceSuspendDueToArrears': { zh: '账号欠费，短信服务已停止', retryable: false },
  'UnauthorizedOperation.SmsSdkAppIdVerifyFail': { zh: 'SmsSdkAppId 不属于该密钥的账号', retryable: false },
  'UnsupportedOperation.ContainDomesticAndInternationalPhoneNumber': {
    zh: '同一请求中既有国内号码也有境外号码',
    retryable: false,
  },
  'UnsupportedOperation.UnsupportedRegion': { zh: '不支持向该地区发送短信', retryable: false },
};

/** For codes not in the table: what their family means (a new sub-code keeps its family's meaning). */
const FAMILIES: [prefix: string, error: KnownError][] = [
  ['AuthFailure', { zh: '腾讯云 API 密钥鉴权失败', retryable: false }],
  ['RequestLimitExceeded', { zh: '请求频率超过腾讯云接口限制', retryable: true }],
  ['InternalError', { zh: '腾讯云内部错误', retryable: true }],
  ['LimitExceeded', { zh: '发送数量或频率超过上限', retryable: false }],
  ['FailedOperation', { zh: '腾讯云短信操作失败', retryable: false }],
  ['InvalidParameter', { zh: '请求参数错误', retryable: false }],
  ['MissingParameter', { zh: '缺少请求参数', retryable: false }],
  ['UnauthorizedOperation', { zh: '未授权的操作', retryable: false }],
  ['UnsupportedOperation', { zh: '不支持的操作', retryable: false }],
];

export function describeTencentError(code: string): KnownError {
  const known = KNOWN[code];
  if (known) return known;
  for (const [prefix, error] of FAMILIES) if (code === prefix || code.startsWith(`${prefix}.`)) return error;
  return { zh: '腾讯云短信返回错误', retryable: false };
}

/** The record's message: ours in Chinese first, then the vendor's words. */
export function tencentErrorMessage(code: string, vendorMessage: string): string {
  const { zh } = describeTencentError(code);
  return vendorMessage && vendorMessage !== zh ? `${zh}（${vendorMessage}）` : zh;
}

/** A failed call of a review or query action (a send reports its failure as a result instead). */
export class TencentSmsError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly retryable: boolean,
    readonly requestId: string | null = null,
  ) {
    super(message);
    this.name = 'TencentSmsError';
  }
}
