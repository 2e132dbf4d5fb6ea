/**
 * Chinese text normalisation for speech (TTS front end): digits, money, dates, times, phone
 * numbers, percentages and units are rewritten into the Chinese words a caller expects, before
 * the text reaches any synthesiser. Cloud vendors each guess differently ("10086" as a count or
 * a number to dial, "2026-11-24" as a subtraction) and the offline espeak voice guesses worst,
 * so the engine decides once and every voice says the same thing.
 *
 * The categories and their tricky cases follow the open-source Chinese TN pipelines:
 * WeTextProcessing `tn/chinese/rules/{cardinal,date,time,money,measure}.py` and its test data
 * (110 → 幺幺零, 2:02 → 两点零二分, 2年后 → 两年后 but 2两 → 二两, 2008/08/08 dates),
 * speechio chinese_text_normalization (`cn_tn.py`: telephone digits with 幺, money units,
 * percentages) and cn2an's `an2cn` (zero placement: 1000054 → 一百万零五十四). This is an
 * independent implementation: ordered, context-checked patterns instead of FSTs.
 *
 * Deliberate readings (consistent everywhere):
 * - 两 before 千/万/亿 when it leads the number (2000 → 两千, 20000 → 两万, 22000 → 两万二千)
 *   and for a bare 2 before a measure word (2个 → 两个); 二 otherwise (200 → 二百, 第2 → 第二,
 *   2月 → 二月, 12 → 十二).
 * - Phone numbers digit by digit with 1 as 幺, grouped with a Chinese comma so the caller hears
 *   the pauses needed to write the number down; codes (验证码, 订单号…) digit by digit with 一.
 * - Anything not recognised (Chinese, punctuation, English words and model names such as 5G or
 *   GPT-4o) is left as it is. The function never throws: on an unexpected failure it returns
 *   the input unchanged, because speaking raw digits beats dropping the sentence.
 */

const DIGITS = '零一二三四五六七八九';
const SECTION_UNITS = ['', '十', '百', '千'];
const GROUP_UNITS = ['', '万', '亿', '万亿'];
/** Pause between the groups of a phone number. */
const PHONE_PAUSE = '，';

/** Digit by digit: codes use 一, phone numbers 幺 (one sounds too much like seven on a phone line). */
function readDigits(digits: string, one: '一' | '幺' = '一'): string {
  let out = '';
  for (const ch of digits) out += ch === '1' ? one : DIGITS[ch.charCodeAt(0) - 48];
  return out;
}

/** 1-9999 (up to 4 digits, may carry leading zeros), with inner zeros spoken once: 1010 → 一千零一十. */
function readSection(section: string): string {
  let out = '';
  let zero = false;
  for (let i = 0; i < section.length; i++) {
    const d = section.charCodeAt(i) - 48;
    if (d === 0) {
      if (out) zero = true;
      continue;
    }
    if (zero) out += '零';
    zero = false;
    out += DIGITS.charAt(d) + (SECTION_UNITS[section.length - 1 - i] ?? '');
  }
  return out;
}

/**
 * An integer the way it is counted: 10086 → 一万零八十六, 100000 → 十万, 2000 → 两千 (`liang`
 * false for ordinals and dates: 第二千). Longer than 16 digits is not a quantity anyone says,
 * so it is read digit by digit.
 */
export function readCardinal(integer: string, liang = true): string {
  const digits = integer.replace(/^0+(?=\d)/, '');
  if (digits === '0') return '零';
  if (digits.length > 16) return readDigits(digits);
  const groups: string[] = [];
  for (let end = digits.length; end > 0; end -= 4) groups.unshift(digits.slice(Math.max(0, end - 4), end));
  let out = '';
  let pendingZero = false;
  groups.forEach((group, index) => {
    if (/^0+$/.test(group)) {
      if (out) pendingZero = true;
      return;
    }
    // 一万零八十六, 一亿零一万: a gap inside the number is spoken as one 零.
    if (out && (pendingZero || group[0] === '0')) out += '零';
    out += readSection(group) + GROUP_UNITS[groups.length - 1 - index];
    pendingZero = false;
  });
  // 12 → 十二 and 120000 → 十二万, but 112 keeps its 一百一十二.
  if (out.startsWith('一十')) out = out.slice(1);
  if (liang && /^二[千万亿]/u.test(out)) out = `两${out.slice(1)}`;
  return out;
}

/** 3.14 → 三点一四, 0.5 → 零点五: the fraction is read digit by digit. */
function readDecimal(integer: string, fraction: string | undefined, liang = true): string {
  const whole = readCardinal(integer, liang);
  return fraction ? `${whole}点${readDigits(fraction)}` : whole;
}

// Measure words after which a lone 2 is 两 (两个, 两次, 两位, 两万). 月/号/日/层/度 stay 二:
// 二月, 二号, 二层 (a floor), 二度 (a temperature), and 二两 (WeText's "2两 → 二两").
const MEASURE =
  /^\s?(?:个|位|次|件|张|本|台|辆|条|只|份|种|天|年|岁|周|星期|小时|分钟|秒钟|家|项|名|套|瓶|杯|碗|块|元|角|毛|斤|公斤|千克|克|公里|千米|米|厘米|毫米|升|毫升|吨|间|栋|遍|下|步|点|倍|人|批|笔|单|盒|箱|袋|包|双|对|支|颗|部|把|顿|场|轮|期|节|门|篇|首|票|趟|圈|片|粒|成|样|架|艘|根|头|匹|棵|朵|封|句|声|口|层楼|千|万|亿)/u;
/** What makes a long number a quantity rather than a code: a measure word or magnitude after it. */
const COUNT_AFTER = /^\s?(?:多|余|分|百|积分|字|户|例|%|％|‰|平方|立方)/u;
/** …or a word before it that announces an amount. */
const COUNT_BEFORE =
  /(?:共|总共|一共|合计|总计|累计|约|大约|超过|达到|达|近|将近|多达|高达|价格|售价|金额|余额|费用|价值|收入|销量|人数|数量|积分|得分|分数|步数|里程|仅|只要|增加|减少|增长|下降|上涨|奖励|赠送|获得|扣除|支付|退款|充值|消费|第)[了是为：:\s]{0,2}$/u;
/** Words after which a short number is one to dial: 拨打110, 客服电话10086, 热线：95588. */
const PHONE_BEFORE = /(?:电话|热线|拨打|拨|致电|呼叫|来电|手机|号码|客服|报警|急救|联系)[是为：:\s]{0,2}$/u;
/** Numbers to dial that need no context word: carriers (100xx), banks (95xxx/96xxx), hotlines (123xx, 111xx). */
const SERVICE_NUMBER = /^(?:95\d{3}|96\d{3}|100\d{2}|123\d{2}|111\d{2})$/;

const measureFollows = (after: string) => MEASURE.test(after);

/** Integer digits as written, without thousands separators: "1,234" → "1234". */
const plain = (integer: string) => integer.replaceAll(',', '');

/** 1-3 digits with thousands separators, or plain digits; then an optional fraction. */
const NUM = String.raw`(\d{1,3}(?:,\d{3})+(?!\d)|\d+)(?:\.(\d+))?`;
/** A minus sign only where it cannot be a dash between two numbers or a hyphen in a word. */
const SIGN = String.raw`(?:(?<![\dA-Za-z)）\]])([-−]))?`;
/** Numbers start here: never in the middle of a number or a word. */
const START = String.raw`(?<![\dA-Za-z.])`;

interface Rule {
  name: string;
  re: RegExp;
  /** The spoken form, or null to let a later rule try. */
  read(m: RegExpExecArray, text: string): string | null;
}

const rule = (name: string, source: string, read: Rule['read']): Rule => ({
  name,
  re: new RegExp(source, 'yu'),
  read,
});

const before = (m: RegExpExecArray, text: string, chars = 10) =>
  text.slice(Math.max(0, m.index - chars), m.index);
const after = (m: RegExpExecArray, text: string) =>
  text.slice(m.index + m[0].length, m.index + m[0].length + 6);

/** 9 → 九, 2 → 两 (两点), 0 → 零: the hour of a clock time. */
const readHour = (hour: string) => (Number(hour) === 2 ? '两' : readCardinal(hour, false));
/** 05 → 零五, 30 → 三十. */
const readMinute = (minute: string) =>
  minute.length === 2 && minute[0] === '0' ? `零${DIGITS[Number(minute[1])]}` : readCardinal(minute, false);

function readMoney(integer: string, fraction: string | undefined, unit: '元' | '块', sign = ''): string {
  // 0.125元 has no 角/分 reading; say it as a decimal.
  if (fraction && fraction.length > 2 && /[1-9]/.test(fraction.slice(2))) {
    return `${sign}${readDecimal(integer, fraction)}${unit}`;
  }
  const jiao = Number(fraction?.[0] ?? 0);
  const fen = Number(fraction?.[1] ?? 0);
  const noYuan = /^0*$/.test(integer);
  let out = '';
  if (!noYuan || (jiao === 0 && fen === 0)) out = (integer === '2' ? '两' : readCardinal(integer)) + unit;
  if (jiao) out += DIGITS[jiao] + (unit === '元' ? '角' : '毛');
  if (fen) out += `${jiao === 0 && !noYuan ? '零' : ''}${DIGITS[fen]}分`;
  return sign + out;
}

/** 0755 8888 6666 → groups of the local number as written, or 4-4 / 3-4 when written solid. */
function localGroups(local: string): string[] {
  const parts = local.split(/[\s-]+/).filter(Boolean);
  if (parts.length > 1) return parts;
  const solid = parts[0] ?? '';
  return solid.length > 4 ? [solid.slice(0, solid.length - 4), solid.slice(-4)] : [solid];
}
const readPhone = (groups: string[]) => groups.map((group) => readDigits(group, '幺')).join(PHONE_PAUSE);

const CODE_WORDS =
  '验证码|校验码|动态码|取件码|提取码|取货码|订单号|订单编号|订单|运单号|运单|快递单号|单号|工单号|工号|编号|尾号|卡号|账号|帐号|会员号|身份证号|流水号|序列号|批次号|房间号|合同号';

const UNITS: [string, string][] = [
  ['km²', '平方公里'],
  ['km/h', '公里每小时'],
  ['km', '公里'],
  ['kg', '公斤'],
  ['kWh', '千瓦时'],
  ['kW', '千瓦'],
  ['mg', '毫克'],
  ['cm²', '平方厘米'],
  ['cm', '厘米'],
  ['mm', '毫米'],
  ['m²', '平方米'],
  ['㎡', '平方米'],
  ['m³', '立方米'],
  ['ml', '毫升'],
  ['mL', '毫升'],
  ['min', '分钟'],
  ['ms', '毫秒'],
  ['m', '米'],
  ['g', '克'],
  ['L', '升'],
  ['℃', '摄氏度'],
  ['°C', '摄氏度'],
  ['℉', '华氏度'],
  ['°F', '华氏度'],
  ['°', '度'],
];
const UNIT_NAMES = new Map(UNITS);
const UNIT_SOURCE = UNITS.map(([unit]) => unit.replace(/[/]/g, '\\/')).join('|');
const TEMPERATURE = new Set(['摄氏度', '华氏度', '度']);

const RULES: Rule[] = [
  // 验证码是 123456 → 一二三四五六; 尾号1702 → 一七零二. The keyword wins over every other
  // reading: an order number that looks like a mobile number is still an order number.
  rule('code', String.raw`(?<=(?:${CODE_WORDS})[是为：:\s]{0,3})\d{3,}(?!\d)`, (m, text) =>
    measureFollows(after(m, text)) ? null : readDigits(m[0]),
  ),

  // Mobiles: 13800138000, 138-0013-8000, +86 138 0013 8000. The country code is dropped: a
  // domestic caller writes down the 11 digits.
  rule('mobile', String.raw`${START}(?:(?:\+|00)86[\s-]?)?(1[3-9]\d)[\s-]?(\d{4})[\s-]?(\d{4})(?!\d)`, (m) =>
    readPhone([m[1]!, m[2]!, m[3]!]),
  ),
  // 400-820-8820 → 四零零，八二零，八八二零.
  rule('hotline', String.raw`${START}([48]00)[\s-]?(\d{3})[\s-]?(\d{4})(?!\d)`, (m) =>
    readPhone([m[1]!, m[2]!, m[3]!]),
  ),
  // Landlines with an area code: 010-12345678, （021）6666 8888, 0755 8888 6666.
  rule(
    'landline',
    String.raw`${START}(?:[(（](0(?:10|2\d|[3-9]\d{2}))[)）]\s?|(0(?:10|2\d|[3-9]\d{2}))[\s-]?)([1-9]\d{2,3}[\s-]?\d{4})(?!\d)`,
    (m) => readPhone([m[1] ?? m[2]!, ...localGroups(m[3]!)]),
  ),
  // Short numbers to dial: after 拨打/电话/热线…, or a known service number not used as a count.
  rule('service', String.raw`${START}\d{3,8}(?!\d|\.\d)`, (m, text) => {
    if (measureFollows(after(m, text)) || COUNT_AFTER.test(after(m, text))) return null;
    const context = PHONE_BEFORE.test(before(m, text));
    if (!context && !(SERVICE_NUMBER.test(m[0]) && !COUNT_BEFORE.test(before(m, text)))) return null;
    return readPhone(m[0].length > 5 ? localGroups(m[0]) : [m[0]]);
  }),

  // 2026-11-24, 2026/11/24, 2026.11.24 (WeText reads all three), optionally ending a date range.
  rule(
    'date',
    String.raw`${START}(\d{4})([-/.])(\d{1,2})(?:\2(\d{1,2}))?(?!\d|\.\d)([日号])?(\s?[~～至到]\s?(?=\d{4}\2))?`,
    (m) => {
      const [, year, separator, month, day, suffix, range] = m;
      if (Number(month) < 1 || Number(month) > 12) return null;
      // 2026-11 / 2026/11 is a month; 2026.11 is more likely a decimal.
      if (day === undefined && (separator === '.' || !/^(?:19|20)/.test(year!))) return null;
      if (day !== undefined && (Number(day) < 1 || Number(day) > 31)) return null;
      const spokenDay = day === undefined ? '' : `${readCardinal(day, false)}${suffix ?? '日'}`;
      return `${readDigits(year!)}年${readCardinal(month!, false)}月${spokenDay}${range ? '到' : ''}`;
    },
  ),
  // 2026年 → 二零二六年: years are read digit by digit.
  rule('year', String.raw`${START}(\d{4})(?=\s?年)`, (m) => readDigits(m[1]!)),
  // 14:30 → 十四点三十分, 9:05 → 九点零五分, 12:00 → 十二点, 9:00-18:00 → 九点到十八点.
  rule(
    'time',
    String.raw`${START}(\d{1,2})[:：](\d{2})(?:[:：](\d{2}))?(?![\d:：])(\s?[-~～–—至到]\s?(?=\d{1,2}[:：]\d{2}))?`,
    (m) => {
      const [, hour, minute, second, range] = m;
      if (Number(hour) > 24 || Number(minute) > 59 || (second !== undefined && Number(second) > 59))
        return null;
      let out = `${readHour(hour!)}点`;
      const hasSecond = second !== undefined && Number(second) > 0;
      if (Number(minute) > 0) out += `${readMinute(minute!)}分`;
      else if (hasSecond) out += '零分';
      if (hasSecond) out += `${readMinute(second!)}秒`;
      return out + (range ? '到' : '');
    },
  ),

  // Ranges: 3-5天 → 三到五天, 1-2个 → 一到两个, 3%-5% → 百分之三到百分之五, 100-200元 →
  // 一百到二百元. Only rising pairs, so 5-3=2 stays a subtraction.
  rule(
    'range',
    String.raw`${START}(\d{1,6})(?:\.(\d+))?(\s?[%％])?\s?[-~～–—]\s?(?=(\d{1,6})(?:\.(\d+))?(\s?[%％])?)`,
    (m, text) => {
      const [, leftInt, leftFrac, leftPercent, rightInt, rightFrac, rightPercent] = m;
      const left = Number(`${leftInt}.${leftFrac ?? 0}`);
      const right = Number(`${rightInt}.${rightFrac ?? 0}`);
      if (!(right > left)) return null;
      const rightEnd =
        m.index +
        m[0].length +
        rightInt!.length +
        (rightFrac === undefined ? 0 : rightFrac.length + 1) +
        (rightPercent?.length ?? 0);
      const next = text.slice(rightEnd, rightEnd + 6);
      if (/^(?:[\d:：/=-]|\.\d)/.test(next)) return null;
      // 1990-2020年: years, read digit by digit like the one after the dash.
      if (leftInt!.length === 4 && !leftFrac && /^\s?年/u.test(next)) return `${readDigits(leftInt!)}到`;
      const spoken =
        leftInt === '2' && leftFrac === undefined && !leftPercent && !rightPercent && measureFollows(next)
          ? '两'
          : readDecimal(leftInt!, leftFrac, false);
      return `${leftPercent || rightPercent ? '百分之' : ''}${spoken}到`;
    },
  ),

  // ¥1,234.56 / ￥12.5 / RMB 300 / ¥3.5万 / $13.5: currency before the amount.
  rule(
    'money-prefix',
    String.raw`${SIGN}(?:([¥￥]|(?<![A-Za-z])(?:RMB|CNY)\s?)|((?<![A-Za-z])(?:US)?\$\s?))([-−])?${NUM}([万亿])?(元)?(?![\d])`,
    (m) => {
      const [, sign, yuan, dollar, innerSign, integer, fraction, magnitude] = m;
      const spokenSign = sign || innerSign ? '负' : '';
      if (dollar) return `${spokenSign}${readDecimal(plain(integer!), fraction)}${magnitude ?? ''}美元`;
      if (yuan && magnitude) return `${spokenSign}${readDecimal(plain(integer!), fraction)}${magnitude}元`;
      return readMoney(plain(integer!), fraction, '元', spokenSign);
    },
  ),
  // 12.50元 → 十二元五角, 0.05元 → 五分, 100块 → 一百块, 3.5万元 → 三点五万元.
  rule('money', String.raw`${START}${SIGN}${NUM}\s?([万亿千百])?(元|块|圆)`, (m) => {
    const [, sign, integer, fraction, magnitude, unit] = m;
    const spokenSign = sign ? '负' : '';
    if (magnitude) {
      const amount =
        integer === '2' && fraction === undefined && magnitude !== '百'
          ? '两'
          : readDecimal(plain(integer!), fraction);
      return `${spokenSign}${amount}${magnitude}${unit === '块' ? '块' : '元'}`;
    }
    return readMoney(plain(integer!), fraction, unit === '块' ? '块' : '元', spokenSign);
  }),
  // 35% → 百分之三十五, 3.5% → 百分之三点五, 5‰ → 千分之五.
  rule('percent', String.raw`${START}${SIGN}${NUM}\s?([%％‰])`, (m) => {
    const [, sign, integer, fraction, symbol] = m;
    return `${sign ? '负' : ''}${symbol === '‰' ? '千分之' : '百分之'}${readDecimal(plain(integer!), fraction, false)}`;
  }),
  // 5km → 五公里, 2kg → 两公斤, -10℃ → 零下十摄氏度, 120m² → 一百二十平方米.
  rule('unit', String.raw`${START}${SIGN}${NUM}\s?(${UNIT_SOURCE})(?![A-Za-z])`, (m) => {
    const [, sign, integer, fraction, unit] = m;
    const name = UNIT_NAMES.get(unit!)!;
    const temperature = TEMPERATURE.has(name);
    const amount =
      integer === '2' && fraction === undefined && !temperature
        ? '两'
        : readDecimal(plain(integer!), fraction);
    return `${sign ? (temperature ? '零下' : '负') : ''}${amount}${name}`;
  }),
  // 127.0.0.1, 1.2.3: each part digit by digit (WeText: 一二七点零点零点一).
  rule('dotted', String.raw`${START}\d+(?:\.\d+){2,}(?![\d])`, (m) =>
    m[0]
      .split('.')
      .map((part) => readDigits(part))
      .join('点'),
  ),
  // 1/3 → 三分之一 (cn2an: 1/2 → 二分之一). Small numbers only: 2026/11 is a date, handled above.
  rule('fraction', String.raw`${START}(\d{1,3})\/(\d{1,3})(?![\d/])`, (m) => {
    const numerator = Number(m[1]);
    const denominator = Number(m[2]);
    if (!numerator || !denominator || denominator > 100 || numerator > 100) return null;
    return `${readCardinal(m[2]!, false)}分之${readCardinal(m[1]!, false)}`;
  }),

  // Everything else that is a number: decimals, counts, ordinals, negative numbers, codes.
  rule('number', String.raw`${START}${SIGN}${NUM}(?![\dA-Za-z])`, (m, text) => {
    const [, sign, written, fraction] = m;
    const prefix = before(m, text);
    const next = after(m, text);
    const integer = plain(written!);
    const ordinal = prefix.endsWith('第');
    // -5度 is a temperature: 零下五度.
    const spokenSign = sign ? (/^\s?度/u.test(next) ? '零下' : '负') : '';
    if (fraction !== undefined || written!.includes(',')) return spokenSign + readDecimal(integer, fraction);
    // 007, 0571: a leading zero marks a code, never a quantity.
    if (integer.length > 1 && integer[0] === '0') return spokenSign + readDigits(integer);
    if (integer.length >= 5 && !sign) {
      const count = ordinal || measureFollows(next) || COUNT_AFTER.test(next) || COUNT_BEFORE.test(prefix);
      // Without context a round number is an amount (10000 → 一万), anything else a code.
      if (!count && !/000$/.test(integer))
        return readDigits(integer, SERVICE_NUMBER.test(integer) ? '幺' : '一');
    }
    if (integer === '2' && !ordinal && measureFollows(next)) return `${spokenSign}两`;
    return spokenSign + readCardinal(integer, !ordinal);
  }),
  // English words and model names keep their digits: GPT-4o, 5G, A4, v1.2.3, COVID-19.
  rule(
    'word',
    String.raw`[A-Za-z][A-Za-z0-9_]*(?:[.\-'][A-Za-z0-9_]+)*|\d+(?:\.\d+)?[A-Za-z_][A-Za-z0-9_]*(?:[.\-][A-Za-z0-9_]+)*`,
    (m) => m[0],
  ),
];

/** Characters a rule can start at; everything else is copied as it is. */
const RULE_START = /[\dA-Za-z¥￥$+\-−(（]/u;

/** Full-width digits and number punctuation as ASCII, so one set of patterns reads both. */
function toHalfWidth(text: string): string {
  return text
    .replace(/[０-９]/gu, (ch) => String.fromCharCode(ch.charCodeAt(0) - 0xfee0))
    .replace(/(?<=\d)[．](?=\d)/gu, '.')
    .replace(/(?<=\d)[：](?=\d)/gu, ':');
}

function rewrite(text: string): string {
  let out = '';
  let i = 0;
  scan: while (i < text.length) {
    const ch = text[i]!;
    if (RULE_START.test(ch)) {
      for (const { re, read } of RULES) {
        re.lastIndex = i;
        const m = re.exec(text);
        if (!m || m[0].length === 0) continue;
        const spoken = read(m, text);
        if (spoken === null) continue;
        out += spoken;
        i += m[0].length;
        continue scan;
      }
      // No rule took a digit run: copy all of it, so no rule ever starts inside it.
      const run = /^\d+/.exec(text.slice(i))?.[0];
      if (run) {
        out += run;
        i += run.length;
        continue;
      }
    }
    out += ch;
    i++;
  }
  return out;
}

/**
 * The text as a Chinese voice should read it: numbers, money, dates, times, phone numbers,
 * percentages and units in Chinese words; everything else unchanged. Never throws.
 */
export function normalizeForSpeech(text: string): string {
  if (typeof text !== 'string') return '';
  if (!/[0-9０-９]/u.test(text)) return text;
  try {
    return rewrite(toHalfWidth(text));
  } catch {
    return text;
  }
}
