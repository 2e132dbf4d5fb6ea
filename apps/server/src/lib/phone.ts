import { parsePhoneNumberFromString } from 'libphonenumber-js/max';

export type PhoneKind = 'mobile' | 'landline';
export type NormalizedPhone = { ok: true; phone: string; kind: PhoneKind } | { ok: false; reason: string };

export const PHONE_EMPTY = '号码为空';
export const PHONE_BAD_LENGTH = '号码位数不正确';
export const PHONE_NOT_MAINLAND = '不是有效的中国大陆号码';
export const PHONE_FOREIGN = '不是中国大陆号码（仅支持 +86 号码）';
export const PHONE_BAD_CHARS = '号码含有数字以外的字符';
export const PHONE_SCIENTIFIC =
  '号码被表格软件存成了科学计数法（如 1.38001E+10），后几位已丢失无法还原，请把号码列设为“文本”格式后重新导出';
export const PHONE_SERVICE = '不支持呼叫 400/800/95 等服务号码';

/** Full-width digits, plus, dashes, brackets and spaces, as typed with a Chinese IME. */
const FULL_WIDTH = /[\uFF01-\uFF5E]/g;
const SEPARATORS = /[\s\u3000\u00A0\-‐‑–—()（）.·/]/g;
const SCIENTIFIC = /^[+-]?\d+(\.\d+)?[eE][+-]?\d+$/;
/** Spreadsheets hand integers back as "13800138000.0". */
const SPREADSHEET_DECIMAL = /^(\d+)\.0+$/;

/**
 * libphonenumber's CN mobile pattern depends only on the first 5 digits (1740[0-5], 1610x, 13x...),
 * so the verdict for an 11-digit 1xx number is shared by every number with the same 6-digit prefix
 * (one digit of margin for metadata updates). That turns a 100,000-row import from ~1.5 s of
 * parsing into lookups, with at most 100,000 keys however random the input.
 */
const mobileVerdicts = new Map<string, NormalizedPhone>();

function classify(national: string): NormalizedPhone {
  const parsed = parsePhoneNumberFromString(national, 'CN');
  if (parsed?.country !== 'CN' || !parsed.isValid()) {
    return { ok: false, reason: lengthLooksWrong(national) ? PHONE_BAD_LENGTH : PHONE_NOT_MAINLAND };
  }
  const type = parsed.getType();
  const nsn = parsed.nationalNumber;
  if (type === 'MOBILE' || (type === 'FIXED_LINE_OR_MOBILE' && nsn.startsWith('1') && nsn.length === 11)) {
    return { ok: true, phone: nsn, kind: 'mobile' };
  }
  if (type === 'FIXED_LINE' || type === 'FIXED_LINE_OR_MOBILE') {
    return { ok: true, phone: `0${nsn}`, kind: 'landline' };
  }
  return { ok: false, reason: PHONE_SERVICE };
}

/** Shapes whose digit count is the problem, so the reason can say so instead of "not valid". */
function lengthLooksWrong(national: string): boolean {
  if (/^1[3-9]/.test(national)) return national.length !== 11;
  if (national.startsWith('0')) return national.length < 10 || national.length > 12;
  return national.length < 7 || national.length > 12;
}

/**
 * A contact's phone number in the one form the project stores and dials: a mobile as its 11
 * digits, a landline as its area code with the leading 0 and the number (digits only). Accepts
 * what people and spreadsheets produce: +86 / 0086 / 86 prefixes, spaces, dashes, brackets,
 * full-width characters and a trailing ".0"; anything else comes back with a Chinese reason.
 */
export function normalizePhone(raw: unknown): NormalizedPhone {
  if (raw === null || raw === undefined) return { ok: false, reason: PHONE_EMPTY };
  let text = String(raw)
    .replace(FULL_WIDTH, (c) => String.fromCharCode(c.charCodeAt(0) - 0xfee0))
    .trim();
  if (text === '') return { ok: false, reason: PHONE_EMPTY };
  if (SCIENTIFIC.test(text.replace(/\s/g, ''))) return { ok: false, reason: PHONE_SCIENTIFIC };
  text = text.replace(SPREADSHEET_DECIMAL, '$1');
  let digits = text.replace(SEPARATORS, '');
  if (digits === '') return { ok: false, reason: PHONE_EMPTY };
  if (!/^\+?\d+$/.test(digits)) return { ok: false, reason: PHONE_BAD_CHARS };

  let viaCountryCode = false;
  if (digits.startsWith('+')) {
    if (!digits.startsWith('+86')) return { ok: false, reason: PHONE_FOREIGN };
    digits = digits.slice(3);
    viaCountryCode = true;
  } else if (digits.startsWith('0086')) {
    digits = digits.slice(4);
    viaCountryCode = true;
  } else if (digits.startsWith('00')) {
    return { ok: false, reason: PHONE_FOREIGN };
  } else if (/^86(1\d{10}|0\d{9,11})$/.test(digits)) {
    // Without the plus sign only these exact lengths are unambiguous: 86 + a full mobile or landline.
    digits = digits.slice(2);
    viaCountryCode = true;
  }
  // After a country code the trunk 0 is optional ("+86 010 8888 6666" and "+86 10 8888 6666" are
  // both Beijing): anything but a 1[3-9] mobile is a landline, stored with its 0.
  if (viaCountryCode && !digits.startsWith('0') && !/^1[3-9]/.test(digits)) digits = `0${digits}`;
  if (digits === '') return { ok: false, reason: PHONE_BAD_LENGTH };

  if (/^1\d{10}$/.test(digits)) {
    const prefix = digits.slice(0, 6);
    let verdict = mobileVerdicts.get(prefix);
    if (!verdict) {
      verdict = classify(digits);
      mobileVerdicts.set(prefix, verdict);
    }
    return verdict.ok ? { ok: true, phone: digits, kind: 'mobile' } : verdict;
  }
  if (/^1/.test(digits))
    return { ok: false, reason: lengthLooksWrong(digits) ? PHONE_BAD_LENGTH : PHONE_NOT_MAINLAND };
  if (/^[48]00/.test(digits) || /^95/.test(digits)) return { ok: false, reason: PHONE_SERVICE };
  if (!digits.startsWith('0')) {
    // A landline without its area code cannot be dialled from elsewhere; say what is missing.
    return {
      ok: false,
      reason: digits.length <= 8 ? '固定电话须带区号（如 010-88886666）' : PHONE_NOT_MAINLAND,
    };
  }
  return classify(digits);
}
