/**
 * 短信服务商: what the SMS module needs of a vendor. The development outbox (no network) is the
 * default; Aliyun (Dysmsapi 2017-05-25, ACS3-HMAC-SHA256) and Tencent Cloud (sms 2021-01-11,
 * TC3-HMAC-SHA256) speak their published protocols. Credentials are given decrypted, per call:
 * the module keeps them encrypted at rest (lib/secret-box.ts) per project.
 */

export type SmsProviderKind = 'outbox' | 'aliyun' | 'tencent';

export interface AliyunCredentials {
  accessKeyId: string;
  accessKeySecret: string;
}

export interface TencentCredentials {
  secretId: string;
  secretKey: string;
  /** SmsSdkAppId of the SMS application. */
  sdkAppId: string;
  region: string;
  /** 资质 ID of the account's approved 实名资质: AddSmsSign wants it for mainland signatures. */
  qualificationId?: string;
}

/** Where a client sends its requests: the vendor's endpoint, or a local server in tests. */
export interface SmsEndpoint {
  /** e.g. https://dysmsapi.aliyuncs.com or https://sms.tencentcloudapi.com */
  baseUrl: string;
}

export interface SmsSendRequest {
  /** Mainland mobile, 11 digits (the client adds a country code where the vendor wants one). */
  phone: string;
  /** The approved signature's name without brackets. */
  signName: string;
  /** The vendor's approved template code (Aliyun SMS_xxx) or id (Tencent). */
  templateCode: string;
  /** The template's variables by name, in the template's order (Tencent takes them as a list). */
  params: { name: string; value: string }[];
  /** Our message id, echoed back in receipts where the vendor supports it (OutId / SessionContext). */
  outId: string;
}

export type SmsSendResult =
  | { ok: true; providerMessageId: string }
  | {
      ok: false;
      /** The vendor's code, e.g. isv.BUSINESS_LIMIT_CONTROL or LimitExceeded.PhoneNumberDailyLimit. */
      code: string;
      /** The vendor's message, and ours in Chinese for the record's timeline. */
      message: string;
      /** Worth trying again later (throttled, network, 5xx) rather than a final failure. */
      retryable: boolean;
    };

export interface SmsDeliveryReceipt {
  providerMessageId: string;
  phone: string;
  /** Our message id when the vendor echoes it back. */
  outId: string | null;
  status: 'delivered' | 'failed';
  /** The carrier's or vendor's code for a failure (e.g. MK:0001, DB:0141). */
  errorCode: string | null;
  errorMessage: string | null;
  reportedAt: Date;
}

/** A text a recipient sent back (上行), e.g. T / TD / 退订 / R to opt out. */
export interface SmsInboundReply {
  phone: string;
  content: string;
  receivedAt: Date;
  signName: string | null;
}

export type SmsReviewStatus = 'reviewing' | 'approved' | 'rejected';

export interface SmsReviewState {
  status: SmsReviewStatus;
  /** Why it was rejected, as the vendor says it. */
  reason: string | null;
}

export type SmsSignatureSource =
  | 'enterprise'
  | 'app'
  | 'website'
  | 'official_account'
  | 'mini_program'
  | 'trademark';
export type SmsTemplateType = 'verification' | 'notification' | 'marketing';

export interface SmsProviderClient {
  readonly kind: SmsProviderKind;
  /** The vendor's documented send rate the client keeps to (requests per second), for the record. */
  readonly maxRequestsPerSecond: number;
  send(request: SmsSendRequest): Promise<SmsSendResult>;
  /** One template, many recipients in as few requests as the vendor allows; one result per item. */
  sendBatch(templateCode: string, items: Omit<SmsSendRequest, 'templateCode'>[]): Promise<SmsSendResult[]>;
  /** The delivery state the vendor reports for one message, for polling when no push arrives. */
  querySendDetails(
    phone: string,
    providerMessageId: string,
    sentAt: Date,
  ): Promise<SmsDeliveryReceipt | null>;
  submitSignature(signature: {
    name: string;
    source: SmsSignatureSource;
    remark: string;
    proof: { fileName: string; base64: string } | null;
    /**
     * Aliyun's CreateSmsSign ties a signature to entities registered beforehand in its console: the
     * approved qualification (资质, else the client's default), the APP-ICP record for an app source,
     * the trademark for a trademark source. Other vendors ignore it.
     */
    aliyun?: {
      qualificationId?: number;
      appIcpRecordId?: number;
      trademarkId?: number;
      thirdParty?: boolean;
    };
  }): Promise<{ providerRef: string }>;
  querySignature(providerRef: string): Promise<SmsReviewState>;
  submitTemplate(template: {
    name: string;
    type: SmsTemplateType;
    content: string;
    remark: string;
    /** An approved signature the template will be sent under (Aliyun's RelatedSignName asks for one). */
    signName?: string;
  }): Promise<{ providerRef: string }>;
  queryTemplate(providerRef: string): Promise<SmsReviewState>;
}

/**
 * A vendor's push (delivery receipts, replies) as received over HTTP: what it carried, and the
 * answer the vendor expects, so it does not push again.
 */
export interface SmsPushParse {
  receipts: SmsDeliveryReceipt[];
  replies: SmsInboundReply[];
  answer: { status: number; body: unknown };
}

/**
 * The client of a project's configured provider (sms_settings), built from its decrypted
 * credentials and cached until the settings change. The sending worker, the review submission and
 * the receipt poller all ask through it.
 */
export type SmsClientResolver = (projectId: string) => Promise<SmsProviderClient>;
