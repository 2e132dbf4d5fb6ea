export const paths = {
  home: '/',
  login: '/login',
  signup: '/signup',
  forgetPassword: '/forget-password',
  thirdLogin: '/third-login',
  /** 接受邀请: a project invitation link from e-mail (public; accepting needs the invited account). */
  invite: '/invite/:token',
  dashboard: '/dashboard',
  accountInfo: '/account-info',
  callRecord: '/call-record',
  callRecordList: '/call-record/list',
  callTask: '/call-task',
  callTaskList: '/call-task/list',
  ivr: '/ivr',
  /** 号码管理: the project's numbers and which assistant answers each (linked from the assistant editor). */
  ivrNumbers: '/ivr/numbers',
  /** 通话流程: the project's IVR call flows. */
  ivrFlows: '/ivr/list',
  /** 线路管理: the project's SIP trunks. */
  ivrTrunks: '/ivr/trunks',
  assistant: '/assistant',
  assistantList: '/assistant/list',
  /** 语音配置: the project's recognition and synthesis profiles, fallbacks and cloned voices. */
  assistantSpeech: '/assistant/speech',
  knowledge: '/knowledge',
  dataReport: '/data-report',
  dataReportCallin: '/data-report/callin',
  sms: '/sms',
  /** 短信管理: signatures (签名) and templates (模板) go through the carriers' review before any send. */
  smsSignature: '/sms/signature',
  smsTemplate: '/sms/template',
  smsSend: '/sms/send',
  smsRecord: '/sms/record',
  smsStatistics: '/sms/statistics',
  smsOptOut: '/sms/opt-outs',
  smsSettings: '/sms/settings',
  developerOptions: '/developer-options',
  /** 开发者选项: API keys of the open API, webhook endpoints and the open API's reference. */
  developerKeys: '/developer-options/keys',
  developerWebhooks: '/developer-options/webhooks',
  developerDocs: '/developer-options/docs',
  settings: '/settings',
} as const;

/** The flow editor of one flow (/ivr/edit/:flowId). */
export const ivrFlowEditPath = (flowId: string) => `/ivr/edit/${encodeURIComponent(flowId)}`;

/** One webhook endpoint's page: its secret, test events and delivery log. */
export const webhookEndpointPath = (endpointId: string) =>
  `/developer-options/webhooks/${encodeURIComponent(endpointId)}`;

/** The login URL that brings the user back to `returnTo` (path + query) after signing in. */
export function loginHref(returnTo?: string): string {
  return returnTo ? `${paths.login}?redirect=${encodeURIComponent(returnTo)}` : paths.login;
}

/** The sign-up URL that, once the account exists, opens `returnTo` instead of asking for a project. */
export function signupHref(returnTo?: string): string {
  return returnTo ? `${paths.signup}?redirect=${encodeURIComponent(returnTo)}` : paths.signup;
}

/** The call-record list filtered as a figure's `drill` says: every figure that counts calls links here. */
export function callListHref(filters: Record<string, string>): string {
  const query = new URLSearchParams(filters).toString();
  return query ? `${paths.callRecordList}?${query}` : paths.callRecordList;
}
