// biome-ignore-all lint/suspicious/noTemplateCurlyInString: ${name} is the vendors' own template variable syntax, written literally in rules, messages and examples.
import { describe, expect, it } from 'vitest';
import { SMS_MARKETING_OPT_OUT, type SmsTemplateType } from './sms';
import {
  lintSmsTemplate,
  renderSmsTemplate,
  SMS_LINT_RULES,
  type SmsLintInput,
  smsLength,
  smsLintResult,
  smsLintRulesFor,
  smsParts,
  smsTemplateVariables,
} from './sms-lint';

const VERIFY_OK = '您的验证码为${code}，5分钟内有效，请勿泄露给他人。';
const NOTIFY_OK = '您的订单${order}已发货，预计${date}送达，客服电话400-800-1234。';
const MARKET_OK = `尊敬的会员，春季新品已上架，详见 www.example.com ${SMS_MARKETING_OPT_OUT}`;

const lint = (type: SmsTemplateType, content: string, extra: Partial<SmsLintInput> = {}) =>
  lintSmsTemplate({ type, content, ...extra });
const ruleIssues = (
  rule: string,
  type: SmsTemplateType,
  content: string,
  extra: Partial<SmsLintInput> = {},
) => lint(type, content, extra).issues.filter((issue) => issue.rule === rule);

type Case = {
  rule: string;
  type: SmsTemplateType;
  pass: string;
  fail: string;
  level: 'error' | 'warning';
  extra?: Partial<SmsLintInput>;
  /** A text the failing message must contain: it names what to change. */
  says: string;
};

/** A passing and a failing template for every rule: the rule fires on one and stays quiet on the other. */
const CASES: Case[] = [
  { rule: 'length', type: 'notification', pass: NOTIFY_OK, fail: '   ', level: 'error', says: '请输入' },
  {
    rule: 'length',
    type: 'notification',
    pass: `通知：${'很'.repeat(495)}`,
    fail: `通知：${'很'.repeat(498)}`,
    level: 'error',
    says: '超过 500 字',
  },
  {
    rule: 'parts',
    type: 'notification',
    pass: NOTIFY_OK,
    fail: `您的订单已发货，${'请注意查收'.repeat(14)}`,
    level: 'warning',
    says: '按 2 条计费',
  },
  {
    rule: 'signature-brackets',
    type: 'notification',
    pass: NOTIFY_OK,
    fail: `【通知】${NOTIFY_OK}`,
    level: 'error',
    says: '【】',
  },
  {
    rule: 'square-brackets',
    type: 'notification',
    pass: NOTIFY_OK,
    fail: `[Shop]${NOTIFY_OK}`,
    level: 'error',
    says: '开头或结尾',
  },
  {
    rule: 'square-brackets',
    type: 'notification',
    pass: NOTIFY_OK,
    fail: '您的订单${order}[加急]已发货。',
    level: 'warning',
    says: '（）',
  },
  {
    rule: 'special-symbols',
    type: 'notification',
    pass: NOTIFY_OK,
    fail: `★${NOTIFY_OK}`,
    level: 'error',
    says: '★',
  },
  {
    rule: 'special-symbols',
    type: 'notification',
    pass: NOTIFY_OK,
    fail: `${NOTIFY_OK}😀`,
    level: 'warning',
    says: '2 个字',
  },
  {
    rule: 'variable-syntax',
    type: 'notification',
    pass: NOTIFY_OK,
    fail: '您的订单${订单号}已发货。',
    level: 'error',
    says: '英文字母开头',
  },
  {
    rule: 'variable-syntax',
    type: 'notification',
    pass: NOTIFY_OK,
    fail: '您的账号${mobile}已开通。',
    level: 'error',
    says: '保留名',
  },
  {
    rule: 'variable-syntax',
    type: 'notification',
    pass: NOTIFY_OK,
    fail: '您的订单${order已发货。',
    level: 'error',
    says: '未闭合',
  },
  {
    rule: 'variable-syntax',
    type: 'notification',
    pass: NOTIFY_OK,
    fail: '您的订单{1}已发货。',
    level: 'error',
    says: '${name}',
  },
  {
    rule: 'variable-once',
    type: 'notification',
    pass: NOTIFY_OK,
    fail: '订单${order}已发货，订单${order}预计明天送达。',
    level: 'error',
    says: '${order}',
  },
  {
    rule: 'variables-adjacent',
    type: 'notification',
    pass: '会议将于${date}的${hour}开始。',
    fail: '会议将于${date}${hour}开始。',
    level: 'error',
    says: '紧挨',
  },
  {
    rule: 'variables-adjacent',
    type: 'notification',
    pass: '会议将于${date}的${hour}开始。',
    fail: '会议将于${date} ${hour}开始。',
    level: 'warning',
    says: '空格',
  },
  {
    rule: 'not-all-variables',
    type: 'notification',
    pass: NOTIFY_OK,
    fail: '${title}：${body}',
    level: 'error',
    says: '固定文字',
  },
  {
    rule: 'variable-only-line',
    type: 'notification',
    pass: '您的订单已发货。\n单号：${order}',
    fail: '您的订单已发货。\n${order}',
    level: 'warning',
    says: '这一行',
  },
  {
    rule: 'variable-length',
    type: 'notification',
    pass: NOTIFY_OK,
    fail: NOTIFY_OK,
    level: 'error',
    extra: { values: { order: 'A'.repeat(36), date: '明天' } },
    says: '35 字',
  },
  {
    rule: 'fixed-links',
    type: 'notification',
    pass: '您的订单已发货，详情见 https://example.com/orders 。',
    fail: '您的订单已发货，详情见 https://example.com/orders/${order} 。',
    level: 'error',
    says: '固定文字',
  },
  {
    rule: 'fixed-links',
    type: 'notification',
    pass: '您的订单已发货，详情见 www.example.com 。',
    fail: '您的订单已发货，详情见 www.${site_name}.com 。',
    level: 'error',
    says: '由变量拼成',
  },
  {
    rule: 'fixed-links',
    type: 'notification',
    pass: '您的订单${order}已发货。',
    fail: '您的订单已发货，详情见${url}。',
    level: 'error',
    says: '${url}',
  },
  {
    rule: 'no-short-links',
    type: 'notification',
    pass: '您的订单已发货，详情见 https://www.example.com/o 。',
    fail: '您的订单已发货，详情见 https://t.cn/A6xYz 。',
    level: 'error',
    says: 't.cn',
  },
  {
    rule: 'no-im-contact',
    type: 'notification',
    pass: NOTIFY_OK,
    fail: '您的订单已发货，售后请加微信咨询。',
    level: 'error',
    says: '加微信',
  },
  {
    rule: 'no-mobile-number',
    type: 'notification',
    pass: NOTIFY_OK,
    fail: '您的订单已发货，如有疑问请致电13812345678。',
    level: 'error',
    says: '13812345678',
  },
  {
    rule: 'verification-keyword',
    type: 'verification',
    pass: VERIFY_OK,
    fail: '您的登录密码为${code}，5分钟内有效。',
    level: 'error',
    says: '验证码',
  },
  {
    rule: 'verification-keyword',
    type: 'verification',
    pass: VERIFY_OK,
    fail: '您的动态码为${code}，5分钟内有效。',
    level: 'warning',
    says: '校验码',
  },
  {
    rule: 'verification-code-variable',
    type: 'verification',
    pass: VERIFY_OK,
    fail: '您的验证码为1234，5分钟内有效。',
    level: 'error',
    says: '${code}',
  },
  {
    rule: 'verification-code-variable',
    type: 'verification',
    pass: VERIFY_OK,
    fail: '${user}您好，您的验证码为${code}，5分钟内有效。',
    level: 'error',
    says: '只能有一个变量',
  },
  {
    rule: 'verification-code-variable',
    type: 'verification',
    pass: VERIFY_OK,
    fail: VERIFY_OK,
    level: 'error',
    extra: { values: { code: '1234567' } },
    says: '4～6 位数字',
  },
  {
    rule: 'verification-code-variable',
    type: 'verification',
    pass: VERIFY_OK,
    fail: '您的验证码为${word}，5分钟内有效。',
    level: 'warning',
    says: '${code}',
  },
  {
    rule: 'verification-purpose',
    type: 'verification',
    pass: VERIFY_OK,
    fail: '您的验证码为${code}。',
    level: 'warning',
    says: '有效期',
  },
  {
    rule: 'verification-only',
    type: 'verification',
    pass: VERIFY_OK,
    fail: `您的验证码为\${code}，5分钟内有效。${SMS_MARKETING_OPT_OUT}`,
    level: 'error',
    says: '退订',
  },
  {
    rule: 'verification-only',
    type: 'verification',
    pass: VERIFY_OK,
    fail: '您的验证码为${code}，5分钟内有效，登录即领红包。',
    level: 'error',
    says: '红包',
  },
  {
    rule: 'verification-only',
    type: 'verification',
    pass: VERIFY_OK,
    fail: '您的验证码为${code}，5分钟内有效，详见 www.example.com 。',
    level: 'error',
    says: '链接',
  },
  {
    rule: 'verification-only',
    type: 'verification',
    pass: VERIFY_OK,
    fail: '您的验证码为${code}，5分钟内有效，客服电话400-800-1234。',
    level: 'error',
    says: '电话',
  },
  {
    rule: 'notification-contacts',
    type: 'notification',
    pass: '您的预约已确认，客服电话400-800-1234，门店电话010-12345678。',
    fail: '您的预约已确认，客服电话400-800-1234，门店电话010-12345678，投诉电话95588。',
    level: 'error',
    says: '3 个联系电话',
  },
  {
    rule: 'notification-contacts',
    type: 'notification',
    pass: '您的预约已确认，门店电话${store_phone}。',
    fail: '您的预约已确认，客服电话400-800-1234，门店电话${store_phone}，店长电话${manager_tel}。',
    level: 'error',
    says: '最多 2 个',
  },
  {
    rule: 'notification-not-marketing',
    type: 'notification',
    pass: NOTIFY_OK,
    fail: `${NOTIFY_OK}${SMS_MARKETING_OPT_OUT}`,
    level: 'error',
    says: '推广',
  },
  {
    rule: 'notification-not-marketing',
    type: 'notification',
    pass: NOTIFY_OK,
    fail: '您的订单${order}已发货，本周全场限时特价。',
    level: 'warning',
    says: '限时',
  },
  {
    rule: 'notification-not-marketing',
    type: 'notification',
    pass: NOTIFY_OK,
    fail: '您的验证码为${code}。',
    level: 'warning',
    says: '验证码',
  },
  {
    rule: 'marketing-opt-out',
    type: 'marketing',
    pass: MARKET_OK,
    fail: '尊敬的会员，春季新品已上架，详见 www.example.com',
    level: 'error',
    says: `加上“${SMS_MARKETING_OPT_OUT}”`,
  },
  {
    rule: 'marketing-opt-out',
    type: 'marketing',
    pass: MARKET_OK,
    fail: `尊敬的会员，${SMS_MARKETING_OPT_OUT}，春季新品已上架。`,
    level: 'error',
    says: '移到内容最后',
  },
  {
    rule: 'marketing-no-verification',
    type: 'marketing',
    pass: MARKET_OK,
    fail: `尊敬的会员，凭验证码到店领取礼品。${SMS_MARKETING_OPT_OUT}`,
    level: 'error',
    says: '验证码',
  },
  {
    rule: 'marketing-member',
    type: 'marketing',
    pass: MARKET_OK,
    fail: `春季新品已上架，详见 www.example.com ${SMS_MARKETING_OPT_OUT}`,
    level: 'warning',
    says: '尊敬的会员',
  },
  {
    rule: 'marketing-member',
    type: 'marketing',
    pass: MARKET_OK,
    fail: `尊敬的会员\${name}，春季新品已上架。${SMS_MARKETING_OPT_OUT}`,
    level: 'warning',
    says: '变量',
  },
];

describe('SMS_LINT_RULES', () => {
  it('explains every rule in Chinese, names its source and the types it applies to', () => {
    const ids = SMS_LINT_RULES.map((rule) => rule.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const rule of SMS_LINT_RULES) {
      expect(rule.title).toMatch(/\p{Script=Han}/u);
      expect(rule.explanation).toMatch(/\p{Script=Han}/u);
      expect(rule.source).toMatch(/阿里云|腾讯云/);
      expect(rule.appliesTo.length).toBeGreaterThan(0);
    }
  });

  it('is covered here by a passing and a failing example for every rule', () => {
    expect(new Set(CASES.map((c) => c.rule))).toEqual(new Set(SMS_LINT_RULES.map((rule) => rule.id)));
  });

  it('lists per type only the rules for that type', () => {
    expect(smsLintRulesFor('marketing').map((rule) => rule.id)).toContain('marketing-opt-out');
    expect(smsLintRulesFor('notification').map((rule) => rule.id)).not.toContain('marketing-opt-out');
    expect(smsLintRulesFor('verification').map((rule) => rule.id)).toContain('verification-keyword');
  });
});

describe('lintSmsTemplate', () => {
  it.each(CASES)('$rule ($level): $fail', ({ rule, type, pass, fail, level, extra, says }) => {
    expect(ruleIssues(rule, type, pass)).toEqual([]);
    const issues = ruleIssues(rule, type, fail, extra);
    expect(issues.map((issue) => issue.level)).toContain(level);
    expect(issues.find((issue) => issue.level === level)?.message).toContain(says);
  });

  it('passes a good template of each type with no issue at all', () => {
    expect(lint('verification', VERIFY_OK, { signatureName: '示例科技' }).issues).toEqual([]);
    expect(lint('notification', NOTIFY_OK, { signatureName: '示例科技' }).issues).toEqual([]);
    expect(lint('marketing', MARKET_OK, { signatureName: '示例科技' }).issues).toEqual([]);
  });

  it('keeps type-specific rules to their type', () => {
    // The opt-out a 推广 template needs is an error in a 通知 one, and 验证码 rules do not read a 通知.
    expect(ruleIssues('marketing-opt-out', 'notification', NOTIFY_OK)).toEqual([]);
    expect(ruleIssues('verification-keyword', 'notification', NOTIFY_OK)).toEqual([]);
    expect(ruleIssues('notification-contacts', 'marketing', MARKET_OK)).toEqual([]);
  });

  it('does not take an amount starting with 95 for a service number', () => {
    expect(
      ruleIssues(
        'notification-contacts',
        'notification',
        '您已支付95123元，客服电话400-800-1234，门店电话010-12345678。',
      ),
    ).toEqual([]);
  });

  it('answers in the shape the server returns', () => {
    expect(smsLintResult.parse(lint('notification', NOTIFY_OK))).toEqual(lint('notification', NOTIFY_OK));
  });

  it('does not take 注册码 for a stated purpose', () => {
    expect(ruleIssues('verification-purpose', 'verification', '您的注册码为${code}。')).toHaveLength(1);
    expect(ruleIssues('verification-purpose', 'verification', '您正在注册，注册码为${code}。')).toEqual([]);
  });

  it('says the same thing once', () => {
    expect(ruleIssues('variable-syntax', 'notification', '订单${}已发货，单号${}')).toHaveLength(1);
  });

  it('lists variables once, in order of first use', () => {
    expect(lint('notification', NOTIFY_OK).variables).toEqual(['order', 'date']);
    expect(lint('notification', '订单${order}，订单${order}，日期${date}').variables).toEqual([
      'order',
      'date',
    ]);
  });

  it('counts the 【signature】 and assumed variable lengths into the preview and billed parts', () => {
    const result = lint('verification', VERIFY_OK, { signatureName: '示例科技' });
    // The code counts as the vendors' 6 digits, the signature with its two brackets.
    expect(result.preview).toEqual(['【示例科技】您的验证码为123456，5分钟内有效，请勿泄露给他人。']);
    expect(result.length).toBe(VERIFY_OK.length);
    expect(result.parts).toBe(1);
    expect(result.partsWithSignature).toBe(1);

    const values = lint('verification', VERIFY_OK, { signatureName: '示例科技', values: { code: '4821' } });
    expect(values.preview[0]).toContain('验证码为4821，');
    expect(values.issues).toEqual([]);
  });

  it('bills a template that fits alone in 70 as two parts once the signature pushes it past 70', () => {
    const content = `通知：${'很'.repeat(67)}`; // 70 characters
    const result = lint('notification', content, { signatureName: '示例' });
    expect(result.parts).toBe(1);
    expect(result.partsWithSignature).toBe(2);
    expect(result.preview.map((part) => part.length)).toEqual([67, 7]);
    expect(result.preview.join('')).toBe(`【示例】${content}`);
  });

  it('counts the whole sent text towards 500 as Tencent does, as a warning', () => {
    const content = `通知：\${detail}${'很'.repeat(480)}`;
    const issues = ruleIssues('length', 'notification', content, {
      signatureName: '示例科技',
      values: { detail: '很'.repeat(20) },
    });
    expect(issues).toEqual([expect.objectContaining({ level: 'warning' })]);
  });
});

describe('smsParts', () => {
  const text = (n: number) => '字'.repeat(n);

  it('sends up to 70 characters as one part and 71 as two of 67 and 4', () => {
    expect(smsParts('')).toEqual([]);
    expect(smsParts(text(1))).toHaveLength(1);
    expect(smsParts(text(70))).toEqual([text(70)]);
    expect(smsParts(text(71)).map((part) => part.length)).toEqual([67, 4]);
  });

  it('fits 134 characters in two parts and needs a third at 135', () => {
    expect(smsParts(text(134)).map((part) => part.length)).toEqual([67, 67]);
    expect(smsParts(text(135)).map((part) => part.length)).toEqual([67, 67, 1]);
    expect(smsParts(text(500))).toHaveLength(8);
  });

  it('counts letters, digits, spaces and both widths of punctuation as one each', () => {
    expect(smsLength('Ab1 ，,。.')).toBe(8);
    expect(smsParts(`${'a'.repeat(69)}，`)).toHaveLength(1);
  });

  it('counts an emoji (a surrogate pair in UCS-2) as two and never cuts it between parts', () => {
    expect(smsLength('😀')).toBe(2);
    expect(smsParts(`${text(68)}😀`)).toHaveLength(1); // exactly 70 units
    expect(smsParts(`${text(69)}😀`)).toHaveLength(2); // 71 units
    // The pair would straddle units 67 and 68: it moves whole into the second part.
    const parts = smsParts(`${text(66)}😀${text(60)}`);
    expect(parts.map((part) => part.length)).toEqual([66, 62]);
    expect(parts[1]!.startsWith('😀')).toBe(true);
    expect(smsParts('😀'.repeat(100)).every((part) => !/[\uD800-\uDBFF]$/.test(part))).toBe(true);
  });
});

describe('renderSmsTemplate', () => {
  it('fills each variable and leaves one without a value as written', () => {
    expect(renderSmsTemplate('订单${order}预计${date}送达', { order: 'A1', date: 3 })).toBe(
      '订单A1预计3送达',
    );
    expect(renderSmsTemplate('订单${order}预计${date}送达', { order: 'A1' })).toBe('订单A1预计${date}送达');
  });

  it('finds every variable with its place', () => {
    expect(smsTemplateVariables('a${x}b${y}')).toEqual([
      { name: 'x', start: 1, end: 5 },
      { name: 'y', start: 6, end: 10 },
    ]);
  });
});
