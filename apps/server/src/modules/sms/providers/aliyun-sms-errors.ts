/**
 * What Aliyun's answers mean for a message, in Chinese for its record's timeline, and whether the
 * module's queue should try again later.
 *
 * Sources: the SMS API error codes (help.aliyun.com/document_detail/101346.html "国内消息API错误码",
 * business errors answered with HTTP 200 and `Code` other than OK) and the POP gateway's common
 * errors (developer.aliyun.com/ask/278265 "管控OpenAPI的客户端公用错误码": SignatureDoesNotMatch 400,
 * InvalidAccessKeyId.NotFound 404, Throttling.User 400, ...).
 */

export interface AliyunErrorMeaning {
  /** 中文说明 for the console. */
  zh: string;
  /** Trying again later may succeed (throttled, the vendor's fault, our network). */
  retryable: boolean;
}

const final = (zh: string): AliyunErrorMeaning => ({ zh, retryable: false });
const later = (zh: string): AliyunErrorMeaning => ({ zh, retryable: true });

export const ALIYUN_SMS_ERRORS: Readonly<Record<string, AliyunErrorMeaning>> = {
  // SMS business errors (HTTP 200, Code ≠ OK).
  'isv.SMS_SIGNATURE_SCENE_ILLEGAL': final(
    '签名与模板类型不匹配：验证码签名只能发送验证码模板，请改用通用签名',
  ),
  'isv.EXTEND_CODE_ERROR': final('扩展码使用错误：相同的扩展码不可用于多个签名'),
  'isv.SIGN_STATE_ILLEGAL': final('签名状态为“不可用”，请在阿里云短信控制台查看原因并修正签名'),
  'isv.DOMESTIC_NUMBER_NOT_SUPPORTED': final('国际/港澳台模板不能发送中国内地号码'),
  'isv.DENY_IP_RANGE': final('发送请求的 IP 不在中国内地，阿里云禁止其发送国内短信'),
  'isv.DAY_LIMIT_CONTROL': final('已达到阿里云控制台设置的日发送量上限'),
  'isv.MONTH_LIMIT_CONTROL': final('已达到阿里云控制台设置的月发送量上限'),
  'isv.SMS_CONTENT_ILLEGAL': final('短信内容包含禁止发送的内容'),
  'isv.SMS_SIGN_ILLEGAL': final('签名被禁止使用'),
  'isp.RAM_PERMISSION_DENY': final('AccessKey 所属 RAM 用户没有短信服务权限（需 AliyunDysmsFullAccess）'),
  'isv.OUT_OF_SERVICE': final('阿里云账户业务停机（余额不足），请充值'),
  'isv.PRODUCT_UN_SUBSCRIPT': final('该阿里云账号未开通云通信服务'),
  'isv.PRODUCT_UNSUBSCRIBE': final('该阿里云账号未开通短信服务'),
  'isv.ACCOUNT_NOT_EXISTS': final('阿里云账户不存在，请检查 AccessKey'),
  'isv.ACCOUNT_ABNORMAL': final('阿里云账户异常'),
  'isv.SMS_TEMPLATE_ILLEGAL': final('模板不存在、未审核通过或与账号不匹配'),
  'isv.SMS_SIGNATURE_ILLEGAL': final('签名不存在、未审核通过或与账号不匹配'),
  'isv.INVALID_PARAMETERS': final('请求参数格式不正确'),
  'isp.SYSTEM_ERROR': later('阿里云系统错误，稍后重试'),
  'isv.MOBILE_NUMBER_ILLEGAL': final('手机号码格式不正确'),
  'isv.MOBILE_COUNT_OVER_LIMIT': final('手机号码数量超过单次上限'),
  'isv.TEMPLATE_MISSING_PARAMETERS': final('模板变量缺少取值'),
  'isv.BUSINESS_LIMIT_CONTROL': later('触发阿里云对同一号码的发送频率限制，稍后重试'),
  'isv.INVALID_JSON_PARAM': final('模板变量必须是字符串'),
  'isv.BLACK_KEY_CONTROL_LIMIT': final('内容命中黑名单关键字'),
  'isv.PARAM_LENGTH_LIMIT': final('模板变量超出长度限制'),
  'isv.PARAM_NOT_SUPPORT_URL': final('模板变量中不允许包含链接'),
  'isv.AMOUNT_NOT_ENOUGH': final('阿里云账户余额不足'),
  'isv.TEMPLATE_PARAMS_ILLEGAL': final('模板变量包含违禁关键字'),
  'isv.SMS_TEST_SIGN_TEMPLATE_LIMIT': final('测试签名和模板只能发给账号绑定的测试号码'),
  'isv.SMS_TEST_NUMBER_LIMIT': final('测试专用签名只能发给已绑定的测试手机号'),
  'isv.SECURITY_FRAUD_LIMIT': final('阿里云安全风控拦截了本次发送'),
  'isv.TEMPLATE_COUNT_OVER_LIMIT': final('模板数量超过上限'),
  'isv.SIGN_COUNT_OVER_LIMIT': final('签名数量超过上限'),
  'isv.SIGN_NAME_ILLEGAL': final('签名名称不符合规范'),
  'isv.SIGN_FILE_LIMIT': final('签名证明文件超过大小限制'),
  'isv.SIGN_OVER_LIMIT': final('签名字符数超过限制'),
  'isv.TEMPLATE_OVER_LIMIT': final('模板字符数超过限制'),
  // The POP gateway (any action).
  SignatureDoesNotMatch: final('AccessKey Secret 不正确，阿里云签名校验未通过'),
  IncompleteSignature: final('请求签名不完整'),
  'InvalidAccessKeyId.NotFound': final('AccessKey ID 不存在'),
  'InvalidAccessKeyId.Inactive': final('AccessKey ID 已停用'),
  'InvalidTimeStamp.Expired': final('服务器时间与阿里云相差超过 15 分钟，请校准时钟'),
  'InvalidTimeStamp.Format': final('请求时间格式不正确'),
  SignatureNonceUsed: later('请求随机数重复，稍后重试'),
  'Forbidden.RAM': final('AccessKey 没有调用该接口的权限'),
  Forbidden: final('AccessKey 没有调用该接口的权限'),
  'InvalidApi.NotFound': final('接口不存在'),
  Throttling: later('调用频率超过阿里云限制，稍后重试'),
  'Throttling.User': later('调用频率超过阿里云对本账号的限制，稍后重试'),
  'Throttling.Api': later('调用频率超过阿里云对该接口的限制，稍后重试'),
  InternalError: later('阿里云内部错误，稍后重试'),
  ServiceUnavailable: later('阿里云服务暂时不可用，稍后重试'),
};

/**
 * The meaning of an answer: by its code, else by its HTTP status (a 5xx or 429 without a known
 * code is worth retrying; anything else unknown is final so a bad request is not resent forever).
 */
export function aliyunErrorMeaning(code: string, message: string, status: number): AliyunErrorMeaning {
  const known = ALIYUN_SMS_ERRORS[code];
  if (code === 'isv.BUSINESS_LIMIT_CONTROL' && /天级/.test(message)) {
    // A day-level cap on one number lifts tomorrow: retrying within the queue's backoff only fails again.
    return final('触发阿里云对同一号码的天级发送限制，今日不再发送');
  }
  if (known) return known;
  if (code.startsWith('Throttling')) return later('调用频率超过阿里云限制，稍后重试');
  if (status >= 500 || status === 429) return later(`阿里云暂时不可用（HTTP ${status}），稍后重试`);
  return final(`阿里云拒绝了请求（${code || `HTTP ${status}`}）`);
}
