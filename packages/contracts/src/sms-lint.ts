// biome-ignore-all lint/suspicious/noTemplateCurlyInString: ${name} is the vendors' own template variable syntax, written literally in rules, messages and examples.
import { z } from 'zod';
import {
  SMS_MARKETING_OPT_OUT,
  SMS_MULTI_PART_LENGTH,
  SMS_SINGLE_PART_LENGTH,
  SMS_TEMPLATE_MAX_LENGTH,
  type SmsLintIssue,
  type SmsTemplateType,
  smsLintIssue,
} from './sms';

/**
 * The SMS template linter, shared by the console (live, as the user types) and the server (before a
 * template is submitted for review, and to bill and preview a send). Both vendors only tell a user
 * what was wrong after a review of hours; every rule here is one they publish that a machine can
 * check, so the avoidable rejections happen here instead.
 *
 * Sources (read 2026-11):
 * - 阿里云《短信模板规范》《验证码模板规范》《通知短信模板规范》《申请短信模板》《短信发送规则》
 *   (help.aliyun.com document_detail 91975, 463237, 463270, 108088, 44335);
 * - 腾讯云《正文模板审核标准》(cloud.tencent.com/document/product/382/39023) and its announcement on
 *   the length of emoji and rare characters (tencentcloud.com/announce/detail/100814).
 *
 * Errors block submission; warnings advise (the review may still pass).
 */

const ALL: SmsTemplateType[] = ['verification', 'notification', 'marketing'];

export interface SmsLintRule {
  id: string;
  /** Shown as the rule's line in the console. */
  title: string;
  /** What the rule asks and why the reviewers ask it. */
  explanation: string;
  appliesTo: SmsTemplateType[];
  /** The published rule it follows. */
  source: string;
}

export const SMS_LINT_RULES: SmsLintRule[] = [
  {
    // Aliyun 通知短信模板规范 "模板内容长度限制：1~500个字符（含变量）"; Tencent "短信总长度（含签名和变量的实际取值）最长不超过500字".
    id: 'length',
    title: `内容 1～${SMS_TEMPLATE_MAX_LENGTH} 字`,
    explanation: `模板内容不能为空，且（含变量）不超过 ${SMS_TEMPLATE_MAX_LENGTH} 字；腾讯云还要求加上签名和变量的实际取值后不超过 ${SMS_TEMPLATE_MAX_LENGTH} 字。汉字、字母、数字、标点和空格都按 1 个字计算。`,
    appliesTo: ALL,
    source: '阿里云《通知短信模板规范》；腾讯云《正文模板审核标准》',
  },
  {
    // Aliyun 短信发送规则: 签名字数含【】; ≤70 字 1 条, >70 字按 67 字/条拆分计费.
    id: 'parts',
    title: `计费条数（${SMS_SINGLE_PART_LENGTH}/${SMS_MULTI_PART_LENGTH} 字拆分）`,
    explanation: `短信长度 = 【签名】（含括号）+ 变量代入后的内容。不超过 ${SMS_SINGLE_PART_LENGTH} 字按 1 条计费；超过即为长短信，按每 ${SMS_MULTI_PART_LENGTH} 字 1 条拆分计费。变量按示例值计字：验证码 6 位、手机号 11 位、时间 16 字、金额 7 字、其他 10 字。表情等扩展字符按 2 个字计算。`,
    appliesTo: ALL,
    source: '阿里云《短信发送规则》',
  },
  {
    // Aliyun: "在模板内容任意位置均不能使用【】"; Tencent: "不支持【】，以免与签名混淆".
    id: 'signature-brackets',
    title: '不含【】',
    explanation:
      '【】是签名专用的括号，签名由系统自动加在内容前面。内容中出现【】会被当成第二个签名，审核必定驳回。',
    appliesTo: ALL,
    source: '阿里云《通知短信模板规范》；腾讯云《正文模板审核标准》',
  },
  {
    // Aliyun: "在模板内容首尾不能使用[ ]" (they imitate an English signature); Huawei/Baidu forbid [] anywhere.
    id: 'square-brackets',
    title: '首尾不用 [ ]',
    explanation:
      '[ ] 是英文签名的括号：放在内容开头或结尾会被当成签名而驳回；放在中间也可能被误认，建议改用（）。',
    appliesTo: ALL,
    source: '阿里云《通知短信模板规范》',
  },
  {
    // Aliyun: "不支持繁体字和特殊符号，例如：體# 『』「」〖〗 m² • ①★※→等"; Tencent: "不支持¥、★…☞、✓、※等".
    id: 'special-symbols',
    title: '不含特殊符号',
    explanation:
      '★※→☞✓①『』「」〖〗¥ 等特殊符号在部分手机上显示为乱码，两家都不接受；表情符号同样可能乱码，且按 2 个字计费。',
    appliesTo: ALL,
    source: '阿里云《通知短信模板规范》；腾讯云《正文模板审核标准》',
  },
  {
    // Aliyun: 变量写作 ${变量名}; 变量名只能是英文字母或字母数字组合，不能为 email、mobile、id、nick、site.
    id: 'variable-syntax',
    title: '变量写作 ${name}',
    explanation:
      '变量写作 ${变量名}：变量名以英文字母开头，只含字母、数字和下划线，不能用 email、mobile、id、nick、site 这些保留名。腾讯云的 {1} 写法由系统在提交时自动转换，不要手写。',
    appliesTo: ALL,
    source: '阿里云《申请短信模板》',
  },
  {
    // Aliyun: "同一个变量在模板中仅可出现一次".
    id: 'variable-once',
    title: '同一变量只出现一次',
    explanation: '同一个变量在模板中只能出现一次；需要重复的内容请写成固定文字或另起一个变量。',
    appliesTo: ALL,
    source: '阿里云《申请短信模板》',
  },
  {
    // Aliyun: "不支持组合变量、变量相邻"; Tencent: "两个变量不能相邻，前后需加文字说明".
    id: 'variables-adjacent',
    title: '变量不相邻',
    explanation:
      '两个变量之间必须有文字说明（如“${date}的${time}”），否则审核员无法判断内容，两家都会驳回组合变量。',
    appliesTo: ALL,
    source: '阿里云《申请短信模板》；腾讯云《正文模板审核标准》',
  },
  {
    // Aliyun: "不支持全变量模板"; Tencent: "不支持全变量模板…除变量以外的文本内容必须可判断短信含义和使用场景".
    id: 'not-all-variables',
    title: '不是全变量',
    explanation:
      '去掉变量后剩下的固定文字必须能看出短信的用途和场景；全是变量的模板可以发送任意内容，审核必定驳回。',
    appliesTo: ALL,
    source: '阿里云《短信模板规范》；腾讯云《正文模板审核标准》',
  },
  {
    // Tencent: 变量"前后需加文字说明，以体现模板使用者的意图".
    id: 'variable-only-line',
    title: '没有只含变量的行',
    explanation: '每一行都应有说明变量含义的文字；只有一个变量的行等于让发送方自由填写一段内容，容易被驳回。',
    appliesTo: ALL,
    source: '腾讯云《正文模板审核标准》',
  },
  {
    // Aliyun: 单个变量长度 1~35 字，验证码 4~6 位; Tencent: 验证码变量仅支持 0~6 位纯数字，个人认证用户每个变量最多 12 字.
    id: 'variable-length',
    title: '变量取值长度',
    explanation:
      '发送时每个变量的取值为 1～35 字（腾讯云个人认证用户最多 12 字），验证码为 4～6 位数字。超出的发送会被运营商拦截。',
    appliesTo: ALL,
    source: '阿里云《申请短信模板》；腾讯云《正文模板审核标准》',
  },
  {
    // Tencent: "链接只能是已 ICP 备案的网址，且必须为常量…不允许设置变量链接，例如 www.{1}.com；变量不允许透传链接".
    id: 'fixed-links',
    title: '链接只能是固定文字',
    explanation:
      '链接必须完整写在模板的固定文字中（已备案的网址），不能由变量拼出或整个放在变量里，否则审核通过后可以发出任意网址。',
    appliesTo: ALL,
    source: '腾讯云《正文模板审核标准》；阿里云《通知短信模板规范》（链接规范）',
  },
  {
    // Aliyun/Huawei: 链接"不能是跳转链接或短网址"; Tencent: 变量不允许透传短链接.
    id: 'no-short-links',
    title: '不用短链接',
    explanation:
      't.cn、dwz.cn、url.cn、bit.ly 等短链接看不出真实去向，常被用于诈骗，运营商和审核都不接受；请写出企业自己的完整网址。',
    appliesTo: ALL,
    source: '阿里云《通知短信模板规范》（链接规范）；腾讯云《正文模板审核标准》',
  },
  {
    // Aliyun and Tencent both forbid "加群、加QQ或者加微信"; Aliyun: 不支持含有特定联系方式（QQ号、QQ群、微信群…手机号）.
    id: 'no-im-contact',
    title: '不引导加微信/QQ/群',
    explanation: '引导添加微信、QQ 或进群的内容两家都禁止发送（常见于诈骗和拉新）。',
    appliesTo: ALL,
    source: '阿里云《通知短信模板规范》；腾讯云《正文模板审核标准》',
  },
  {
    // Aliyun 通知: 不支持含有手机号，联系方式仅支持固定电话、400、95 等; Tencent: 禁止"联系个人手机号".
    id: 'no-mobile-number',
    title: '不含个人手机号',
    explanation: '联系方式只能是固定电话、400、95 等企业客服号码；写在模板里的个人手机号会被驳回。',
    appliesTo: ALL,
    source: '阿里云《通知短信模板规范》；腾讯云《正文模板审核标准》',
  },
  {
    // Aliyun 验证码: "内容必须包含‘验证码、注册码、校验码、动态码（动态密码）’中的任意一个".
    id: 'verification-keyword',
    title: '含“验证码”或“校验码”',
    explanation:
      '验证码模板必须含有“验证码”“校验码”（或“注册码”“动态码”“动态密码”），让收信人知道这是一条验证短信。',
    appliesTo: ['verification'],
    source: '阿里云《验证码模板规范》',
  },
  {
    // Aliyun 验证码: 仅支持添加一个变量，长度 4~6 位; Tencent: 验证码变量仅支持 0~6 位纯数字.
    id: 'verification-code-variable',
    title: '一个 4～6 位验证码变量',
    explanation:
      '验证码模板只能有一个变量，用来放 4～6 位数字验证码（如 ${code}）；用途、有效期等其余内容都写成固定文字。',
    appliesTo: ['verification'],
    source: '阿里云《验证码模板规范》；腾讯云《正文模板审核标准》',
  },
  {
    // Aliyun 验证码: "必须体现且说明‘使用平台、用途、失效时间’中的任意一种".
    id: 'verification-purpose',
    title: '说明用途或有效期',
    explanation:
      '验证码模板要说明用途（登录、注册、支付…）或有效时间（如“5分钟内有效”），否则审核会要求补充。',
    appliesTo: ['verification'],
    source: '阿里云《短信模板规范》',
  },
  {
    // Aliyun 验证码: 不能含有通知、营销、广告词语、退订方式、任何联系方式; 验证码不可夹带链接.
    id: 'verification-only',
    title: '只含验证内容',
    explanation:
      '验证码短信走专用通道，不能夹带营销用语、退订方式、电话号码或链接；这些内容请另建通知或推广模板。',
    appliesTo: ['verification'],
    source: '阿里云《短信模板规范》《验证码模板规范》；腾讯云《正文模板审核标准》',
  },
  {
    // Aliyun 通知: "若包含‘联系方式’，则仅支持固定电话、400、95等企业官方客服电话，且一个模板最多支持2个联系方式".
    id: 'notification-contacts',
    title: '最多 2 个联系电话',
    explanation: '通知模板最多含 2 个联系电话（固定文字中的号码和电话类变量都算）。',
    appliesTo: ['notification'],
    source: '阿里云《通知短信模板规范》',
  },
  {
    // Aliyun 通知: "禁止发送或夹带营销推广类的内容，不能包含拒收请回复R"; 含验证码请选择验证码类型.
    id: 'notification-not-marketing',
    title: '不夹带营销或退订',
    explanation: `通知短信不能含“${SMS_MARKETING_OPT_OUT}”等退订方式或促销用语（那是推广短信）；含验证码的请选验证码类型。类型选错是最常见的驳回原因。`,
    appliesTo: ['notification'],
    source: '阿里云《通知短信模板规范》《申请短信模板》',
  },
  {
    // Aliyun 推广: "末尾必须携带退订方式，统一退订文案为‘拒收请回复R’"; Tencent: 正文模板末尾必须携带退订方式.
    id: 'marketing-opt-out',
    title: `以“${SMS_MARKETING_OPT_OUT}”结尾`,
    explanation: `推广短信必须让收信人可以退订：内容最后必须是“${SMS_MARKETING_OPT_OUT}”，收到 R、T、TD 或“退订”的回复后该号码不再收到推广短信。`,
    appliesTo: ['marketing'],
    source: '阿里云《申请短信模板》；腾讯云《正文模板审核标准》',
  },
  {
    // Aliyun 模板类型: 含验证码的内容须选验证码类型; 推广短信不走验证码通道.
    id: 'marketing-no-verification',
    title: '不含验证码用语',
    explanation: '推广短信不能含“验证码”“校验码”等验证用语，也不能用来发验证码：验证码请用验证码模板。',
    appliesTo: ['marketing'],
    source: '阿里云《申请短信模板》',
  },
  {
    // Aliyun 推广: "不支持向非会员用户发送营销内容…请在模板中添加会员称谓"; Alibaba Cloud: promotional messages typically do not support variables.
    id: 'marketing-member',
    title: '面向会员、少用变量',
    explanation:
      '推广短信只能发给已订阅的会员，模板中应写明会员称谓（如“尊敬的会员”）；阿里云等通常不接受带变量的推广模板，尽量写成固定文字。',
    appliesTo: ['marketing'],
    source: '阿里云《短信模板规范》',
  },
];

const RULE_BY_ID = new Map(SMS_LINT_RULES.map((rule) => [rule.id, rule]));

/** The rules that apply to a template type, in the order the console lists them. */
export const smsLintRulesFor = (type: SmsTemplateType) =>
  SMS_LINT_RULES.filter((rule) => rule.appliesTo.includes(type));

// ---------------------------------------------------------------- length and parts

/**
 * The length of a text as the vendors bill it. Chinese SMS travel in UCS-2, two bytes a unit and 70
 * units a part; a character outside the BMP (most emoji, rare characters) takes a surrogate pair, two
 * units, so it counts 2 (Tencent's announcement says so; Aliyun bills the bytes). A JavaScript
 * string's length is exactly its UTF-16 units.
 */
export const smsLength = (text: string) => text.length;

/**
 * The parts a text is sent as: one part up to 70 units, else parts of 67 (the other 3 units carry the
 * concatenation header). A surrogate pair is never cut in two, so its part ends one unit early.
 */
export function smsParts(text: string): string[] {
  if (text.length === 0) return [];
  if (text.length <= SMS_SINGLE_PART_LENGTH) return [text];
  const parts: string[] = [];
  let start = 0;
  while (start < text.length) {
    let end = Math.min(start + SMS_MULTI_PART_LENGTH, text.length);
    const last = text.charCodeAt(end - 1);
    if (end < text.length && last >= 0xd800 && last <= 0xdbff) end -= 1;
    parts.push(text.slice(start, end));
    start = end;
  }
  return parts;
}

/** The signature as it is sent: the product adds the brackets, and they count. */
export const smsSignatureText = (signatureName?: string) => {
  const name = signatureName?.trim();
  return name ? `【${name}】` : '';
};

// ---------------------------------------------------------------- variables

/** `${name}` as both vendors' consoles write it (the Tencent client numbers them when it submits). */
const VARIABLE = /\$\{([^{}$]*)\}/g;
/** A private-use character: it stands for a variable in the fixed text and matches no pattern. */
const VARIABLE_MARK = '\uE000';
const VARIABLE_NAME = /^[A-Za-z][A-Za-z0-9_]*$/;
/** Aliyun rejects these variable names. */
const RESERVED_VARIABLE_NAMES = new Set(['email', 'mobile', 'id', 'nick', 'site']);

export interface SmsTemplateVariable {
  name: string;
  start: number;
  end: number;
}

/** Every `${name}` in a template, in order (duplicates included). */
export function smsTemplateVariables(content: string): SmsTemplateVariable[] {
  return [...content.matchAll(VARIABLE)].map((match) => ({
    name: match[1] ?? '',
    start: match.index,
    end: match.index + match[0].length,
  }));
}

type VariableKind = 'code' | 'phone' | 'time' | 'money' | 'link' | 'text';

/** What a variable holds, guessed from its name: it decides its sample value and which rules read it. */
function variableKind(name: string): VariableKind {
  const n = name.toLowerCase();
  if (/code|captcha|otp|verify|pin/.test(n)) return 'code';
  if (/phone|tel|mobile|hotline/.test(n)) return 'phone';
  if (/url|link|href|website|domain/.test(n)) return 'link';
  if (/time|date|day|hour/.test(n)) return 'time';
  if (/amount|money|price|fee|balance|cost/.test(n)) return 'money';
  return 'text';
}

/**
 * A representative value per kind, whose length is the length the preview assumes: a code as the
 * vendors' 6 digits, a mainland mobile number, "YYYY-MM-DD hh:mm", and 10 characters for anything else.
 */
const SAMPLE_VALUES: Record<VariableKind, string> = {
  code: '123456',
  phone: '13800138000',
  time: '2026-01-01 09:00',
  money: '1280.00',
  link: 'example.com',
  text: '示例示例示例示例示例',
};

/** The value the linter assumes for a variable when none is given. */
export const smsSampleValue = (name: string) => SAMPLE_VALUES[variableKind(name)];

/**
 * The text a template sends with these values. A variable without a value is left as written, so
 * the server can refuse to send it rather than sending a hole.
 */
export function renderSmsTemplate(
  content: string,
  values: Record<string, string | number | undefined>,
): string {
  return content.replace(VARIABLE, (whole, name: string) => {
    const value = values[name];
    return value === undefined ? whole : String(value);
  });
}

// ---------------------------------------------------------------- patterns

const URL_PATTERN =
  /(?:https?:\/\/|www\.)[^\s，。！？；、）()【】"'“”]+|(?<![\w.@/])(?:[a-z0-9-]+\.)+(?:com|cn|net|org|cc|top|xyz|io|me|ly|gl|im|co|gd|gg|so|info|vip|shop|link)(?:\/[^\s，。！？；、）()【】"'“”]*)?(?![\w.])/gi;
/** Public URL shorteners seen in Chinese SMS, and the generic ones. */
const SHORTENER_HOSTS = [
  't.cn',
  'url.cn',
  'dwz.cn',
  'suo.im',
  'suo.nz',
  'mrw.so',
  'sohu.gg',
  'tb.cn',
  '3.cn',
  'u.jd.com',
  'bit.ly',
  'tinyurl.com',
  'goo.gl',
  't.co',
  'is.gd',
  'ow.ly',
  'rebrand.ly',
  'dwz.lc',
];
const MOBILE_NUMBER = /(?<!\d)1[3-9]\d{9}(?!\d)/g;
/** Fixed lines (area code + number), 400/800 numbers and 95xxx service numbers. */
const SERVICE_NUMBER = /(?<!\d)(?:0\d{2,3}-?\d{7,8}|[48]00-?\d{3}-?\d{4}|95\d{3}(?![\d.元]))(?!\d)/g;
const SPECIAL_SYMBOLS = /[★☆※→←↑↓☞✓✔√●•①-⑳『』「」〖〗¥￥㎡²♥❤]|\^_\^/gu;
const EMOJI = /\p{Extended_Pictographic}/gu;
const VERIFICATION_WORDS = /验证码|校验码|注册码|动态码|动态密码/;
const ISSUE_KEYWORDS = /验证码|校验码/;
const PURPOSE_WORDS =
  /分钟|小时|有效|失效|过期|登录|登陆|注册|身份|支付|绑定|找回|重置|修改|变更|认证|提现|转账|下单|开户/;
const MARKETING_WORDS = /优惠|促销|折扣|特价|特惠|限时|抢购|秒杀|大促|红包|领券|优惠券|满减|低至|包邮|福利/;
const IM_CONTACT = /加\s*(?:微信|vx|qq|群)|微信号|qq\s*号|qq\s*群|微信群|威信/i;
const OPT_OUT_WORDS = /拒收请回复R|回复\s*(?:TD|T|R|N)\s*退订/i;
const MEMBER_WORDS = /会员|尊敬的|亲爱的|用户|客户|顾客/;

function urlHost(url: string): string {
  return url
    .replace(/^https?:\/\//i, '')
    .split(/[/?#]/)[0]!
    .toLowerCase();
}

const isShortener = (url: string) => {
  const host = urlHost(url);
  return SHORTENER_HOSTS.some((short) => host === short || host.endsWith(`.${short}`));
};

// ---------------------------------------------------------------- the linter

export interface SmsLintInput {
  type: SmsTemplateType;
  content: string;
  /** The signature's name without brackets; its 【name】 counts towards the length and parts. */
  signatureName?: string;
  /** Values to preview with (and to check); a missing one takes its kind's sample value. */
  values?: Record<string, string>;
}

/** What the linter answers; the server returns it with a template so the console can show it as is. */
export const smsLintResult = z.object({
  issues: z.array(smsLintIssue),
  /** The distinct variable names, in order of first use. */
  variables: z.array(z.string()),
  /** The template content's own length, variables as written (what the 500 limit reads). */
  length: z.number().int(),
  /** Billed parts of the content alone, variables at their assumed length. */
  parts: z.number().int(),
  /** Billed parts with the 【signature】 in front: what each send costs. */
  partsWithSignature: z.number().int(),
  /** The sent text (signature, then content with its values) split into its parts. */
  preview: z.array(z.string()),
});
export type SmsLintResult = z.infer<typeof smsLintResult>;

export function lintSmsTemplate(input: SmsLintInput): SmsLintResult {
  const { type, content } = input;
  const issues: SmsLintIssue[] = [];
  const rules = new Set(smsLintRulesFor(type).map((rule) => rule.id));
  const report = (rule: string, level: SmsLintIssue['level'], message: string) => {
    if (!RULE_BY_ID.has(rule)) throw new Error(`unknown SMS lint rule ${rule}`);
    // Two nameless ${} say the same thing once.
    if (!rules.has(rule) || issues.some((issue) => issue.rule === rule && issue.message === message)) return;
    issues.push({ rule, level, message });
  };

  const found = smsTemplateVariables(content);
  const variables = [...new Set(found.map((variable) => variable.name))];
  const values: Record<string, string> = {};
  for (const name of variables) values[name] = input.values?.[name] ?? smsSampleValue(name);
  const rendered = renderSmsTemplate(content, values);
  const signature = smsSignatureText(input.signatureName);
  const sent = signature + rendered;
  const preview = smsParts(sent);
  /** The fixed text: each variable replaced by a mark, so that numbers and words never join across it. */
  const fixed = content.replace(VARIABLE, VARIABLE_MARK);
  const trimmed = content.trim();

  // length
  if (trimmed.length === 0) report('length', 'error', '请输入模板内容。');
  if (smsLength(content) > SMS_TEMPLATE_MAX_LENGTH)
    report(
      'length',
      'error',
      `内容共 ${smsLength(content)} 字，超过 ${SMS_TEMPLATE_MAX_LENGTH} 字上限，请删减 ${smsLength(content) - SMS_TEMPLATE_MAX_LENGTH} 字。`,
    );
  else if (smsLength(sent) > SMS_TEMPLATE_MAX_LENGTH)
    report(
      'length',
      'warning',
      `加上签名和变量取值后约 ${smsLength(sent)} 字，超过 ${SMS_TEMPLATE_MAX_LENGTH} 字（腾讯云按发送时的实际长度限制），请缩短内容。`,
    );

  // parts
  if (preview.length > 1)
    report(
      'parts',
      'warning',
      `含签名约 ${smsLength(sent)} 字，超过 ${SMS_SINGLE_PART_LENGTH} 字，每次发送按 ${preview.length} 条计费；删减到 ${SMS_SINGLE_PART_LENGTH} 字以内即按 1 条计费。`,
    );

  // signature-brackets
  if (/[【】]/.test(content))
    report('signature-brackets', 'error', '内容中含有【】，请删除或改用（）；签名会由系统自动加上。');

  // square-brackets
  if (/^[[［]|[\]］]$/.test(trimmed))
    report('square-brackets', 'error', '内容开头或结尾是 [ ]，会被当成签名，请删除或改用（）。');
  else if (/[[\]［］]/.test(content))
    report('square-brackets', 'warning', '内容中含有 [ ]，可能被误认成签名，建议改用（）。');

  // special-symbols
  const symbols = [...new Set(content.match(SPECIAL_SYMBOLS) ?? [])];
  if (symbols.length > 0)
    report('special-symbols', 'error', `请删除特殊符号 ${symbols.join(' ')}，它们在部分手机上显示为乱码。`);
  const emoji = [...new Set(content.replace(SPECIAL_SYMBOLS, '').match(EMOJI) ?? [])];
  if (emoji.length > 0)
    report(
      'special-symbols',
      'warning',
      `表情 ${emoji.join(' ')} 可能显示为乱码，且每个按 2 个字计费，建议删除。`,
    );

  // variable-syntax
  for (const { name } of found) {
    if (!VARIABLE_NAME.test(name))
      report(
        'variable-syntax',
        'error',
        name === ''
          ? '变量 ${} 没有名字，请写成 ${name} 这样的英文名。'
          : `变量名 “${name}” 不合规：请以英文字母开头，只用字母、数字和下划线。`,
      );
    else if (RESERVED_VARIABLE_NAMES.has(name.toLowerCase()))
      report('variable-syntax', 'error', `变量名 “${name}” 是保留名，请换一个（如 ${name}_value）。`);
  }
  if (content.replace(VARIABLE, '').includes('${'))
    report('variable-syntax', 'error', '有未闭合的变量 “${”，请补上 “}”。');
  const numbered = content.replace(VARIABLE, '').match(/(?<!\$)\{\d+\}/g);
  if (numbered)
    report(
      'variable-syntax',
      'error',
      `${numbered.join('、')} 不是本系统的变量写法，请改成 \${name}（提交腾讯云时会自动转换为 {1}）。`,
    );

  // variable-once
  const repeated = variables.filter((name) => found.filter((variable) => variable.name === name).length > 1);
  for (const name of repeated)
    report(
      'variable-once',
      'error',
      `变量 \${${name}} 出现了多次，请只保留一处，其余写成固定文字或另起变量名。`,
    );

  // variables-adjacent
  for (let i = 1; i < found.length; i++) {
    const before = found[i - 1]!;
    const after = found[i]!;
    const between = content.slice(before.end, after.start);
    if (between.length === 0)
      report(
        'variables-adjacent',
        'error',
        `变量 \${${before.name}} 和 \${${after.name}} 紧挨在一起，请在中间加上说明文字。`,
      );
    else if (between.trim().length === 0)
      report(
        'variables-adjacent',
        'warning',
        `变量 \${${before.name}} 和 \${${after.name}} 之间只有空格，可能被视为组合变量，建议加上说明文字。`,
      );
  }

  // not-all-variables
  if (found.length > 0 && !/[\p{L}\p{N}]/u.test(fixed.replaceAll(VARIABLE_MARK, '')))
    report('not-all-variables', 'error', '模板只有变量，请加上说明用途和场景的固定文字。');
  // variable-only-line
  else if (found.length > 0)
    for (const line of fixed.split(/\r?\n/))
      if (line.includes(VARIABLE_MARK) && !/[\p{L}\p{N}]/u.test(line.replaceAll(VARIABLE_MARK, ''))) {
        report('variable-only-line', 'warning', '有一行只有变量，请在这一行写上说明变量含义的文字。');
        break;
      }

  // variable-length
  for (const name of variables) {
    const value = input.values?.[name];
    if (value === undefined) continue;
    if (value.length === 0)
      report('variable-length', 'error', `变量 \${${name}} 的取值为空，发送时每个变量都必须有值。`);
    else if (value.length > 35)
      report('variable-length', 'error', `变量 \${${name}} 的取值有 ${value.length} 字，超过 35 字上限。`);
    else if (value.length > 12)
      report(
        'variable-length',
        'warning',
        `变量 \${${name}} 的取值有 ${value.length} 字；腾讯云个人认证用户每个变量最多 12 字。`,
      );
  }

  // fixed-links
  const urls = content.match(URL_PATTERN) ?? [];
  for (const url of urls)
    if (url.includes('${'))
      report('fixed-links', 'error', `链接 “${url}” 由变量拼成，请把完整网址写成固定文字。`);
  for (const variable of found) {
    // A variable right after a complete fixed address (example.com${path}) still lets the sender choose the page.
    const glued = urls.some(
      (url) => !url.includes('${') && content.indexOf(url) + url.length === variable.start,
    );
    if (variableKind(variable.name) === 'link' || glued)
      report(
        'fixed-links',
        'error',
        `变量 \${${variable.name}} 用来放链接或拼在链接后面，请把完整网址写成固定文字。`,
      );
  }
  for (const [name, value] of Object.entries(input.values ?? {}))
    if (variables.includes(name) && (value.match(URL_PATTERN) ?? []).length > 0)
      report('fixed-links', 'error', `变量 \${${name}} 的取值是链接，链接只能写在模板的固定文字中。`);

  // no-short-links
  for (const url of urls)
    if (isShortener(url))
      report('no-short-links', 'error', `“${url}” 是短链接，请改成企业自己的完整网址（已备案）。`);

  // no-im-contact
  const im = fixed.match(IM_CONTACT);
  if (im) report('no-im-contact', 'error', `请删除“${im[0]}”：引导添加微信、QQ 或进群的内容不能发送。`);

  // no-mobile-number
  const mobiles = fixed.match(MOBILE_NUMBER) ?? [];
  for (const mobile of new Set(mobiles))
    report('no-mobile-number', 'error', `请删除手机号 ${mobile}，联系方式请用固定电话、400 或 95 客服号码。`);

  // verification-keyword
  if (!VERIFICATION_WORDS.test(fixed))
    report(
      'verification-keyword',
      'error',
      '验证码模板须含有“验证码”或“校验码”，例如“您的验证码为${code}”。',
    );
  else if (!ISSUE_KEYWORDS.test(fixed))
    report('verification-keyword', 'warning', '建议使用“验证码”或“校验码”这两个最常见的说法。');

  // verification-code-variable
  if (type === 'verification') {
    if (variables.length === 0)
      report('verification-code-variable', 'error', '请加入一个验证码变量，例如 ${code}。');
    else if (variables.length > 1)
      report(
        'verification-code-variable',
        'error',
        `验证码模板只能有一个变量，现在有 ${variables.length} 个（${variables.map((name) => `\${${name}}`).join('、')}），请把其余的写成固定文字。`,
      );
    else {
      const [name] = variables as [string];
      const value = input.values?.[name];
      if (value !== undefined && !/^\d{4,6}$/.test(value))
        report('verification-code-variable', 'error', `验证码 “${value}” 须为 4～6 位数字。`);
      else if (variableKind(name) !== 'code')
        report(
          'verification-code-variable',
          'warning',
          `变量 \${${name}} 看不出是验证码，建议命名为 \${code}，审核员据此判断它放的是 4～6 位数字。`,
        );
    }
  }

  // verification-purpose
  // 注册码 names the code, not its purpose.
  if (!PURPOSE_WORDS.test(fixed.replace(new RegExp(VERIFICATION_WORDS.source, 'g'), '')))
    report(
      'verification-purpose',
      'warning',
      '请说明验证码的用途（如“用于登录”）或有效期（如“5分钟内有效”）。',
    );

  // verification-only
  if (type === 'verification') {
    if (OPT_OUT_WORDS.test(fixed)) report('verification-only', 'error', '验证码短信不能含退订方式，请删除。');
    const marketing = fixed.match(MARKETING_WORDS);
    if (marketing)
      report('verification-only', 'error', `验证码短信不能含营销用语“${marketing[0]}”，请删除。`);
    if (urls.length > 0) report('verification-only', 'error', '验证码短信不能带链接，请删除。');
    if (
      (fixed.match(SERVICE_NUMBER) ?? []).length > 0 ||
      variables.some((name) => variableKind(name) === 'phone')
    )
      report('verification-only', 'error', '验证码短信不能含电话号码等联系方式，请删除。');
  }

  // notification-contacts
  if (type === 'notification') {
    const numbers =
      (fixed.match(SERVICE_NUMBER) ?? []).length +
      mobiles.length +
      variables.filter((name) => variableKind(name) === 'phone').length;
    if (numbers > 2)
      report('notification-contacts', 'error', `模板中有 ${numbers} 个联系电话，通知短信最多 2 个，请删减。`);
  }

  // notification-not-marketing
  if (type === 'notification') {
    if (OPT_OUT_WORDS.test(fixed))
      report(
        'notification-not-marketing',
        'error',
        `通知短信不能含退订方式（如“${SMS_MARKETING_OPT_OUT}”）；如果是推广内容，请把模板类型改为推广。`,
      );
    const marketing = fixed.match(MARKETING_WORDS);
    if (marketing)
      report(
        'notification-not-marketing',
        'warning',
        `“${marketing[0]}”是营销用语，通知短信夹带营销会被驳回；如果是推广内容，请把类型改为推广。`,
      );
    if (VERIFICATION_WORDS.test(fixed))
      report('notification-not-marketing', 'warning', '内容含验证码用语，请把模板类型改为验证码。');
  }

  // marketing-opt-out
  if (type === 'marketing' && !trimmed.endsWith(SMS_MARKETING_OPT_OUT))
    report(
      'marketing-opt-out',
      'error',
      content.includes(SMS_MARKETING_OPT_OUT)
        ? `请把“${SMS_MARKETING_OPT_OUT}”移到内容最后，其后不要再有文字或标点。`
        : `请在内容最后加上“${SMS_MARKETING_OPT_OUT}”。`,
    );

  // marketing-no-verification
  const verificationWord = fixed.match(VERIFICATION_WORDS);
  if (type === 'marketing' && verificationWord)
    report(
      'marketing-no-verification',
      'error',
      `推广短信不能含“${verificationWord[0]}”，验证码请用验证码模板发送。`,
    );

  // marketing-member
  if (type === 'marketing') {
    if (!MEMBER_WORDS.test(fixed))
      report('marketing-member', 'warning', '推广短信只能发给会员，建议写明称谓，如“尊敬的会员”。');
    if (variables.length > 0)
      report('marketing-member', 'warning', '推广模板含变量，阿里云等通常不接受；尽量写成固定文字。');
  }

  const unsigned = smsParts(rendered).length;
  return {
    issues,
    variables,
    length: smsLength(content),
    parts: unsigned,
    partsWithSignature: preview.length,
    preview,
  };
}
