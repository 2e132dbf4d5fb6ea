import {
  renderSmsTemplate,
  SMS_MARKETING_WINDOW,
  SMS_OPT_OUT_REPLIES,
  SMS_VARIABLE_MAX_LENGTH,
  smsParts,
  smsSignatureText,
  smsTemplateVariables,
} from '@callpilot/contracts';
import { CHINA_OFFSET_MS, chinaDay, chinaDayStart } from '../reports/rollup-range';

/**
 * The rules every send keeps, whatever started it (single, batch, follow-up, assistant, flow, API):
 * pure functions, so the bulk path of a 100,000-row batch applies exactly the same ones.
 */

export type ComposedSms = { ok: true; content: string; parts: number } | { ok: false; message: string };

/** The text as it is sent (【signature】 + the template with its values) and its billed parts. */
export function composeSms(
  signatureName: string,
  templateContent: string,
  values: Record<string, string>,
): ComposedSms {
  const names = [...new Set(smsTemplateVariables(templateContent).map((v) => v.name))];
  const missing = names.filter((name) => !values[name]?.trim());
  if (missing.length > 0) return { ok: false, message: `缺少变量 ${missing.join('、')} 的值` };
  const tooLong = names.filter((name) => (values[name]?.length ?? 0) > SMS_VARIABLE_MAX_LENGTH);
  if (tooLong.length > 0) {
    return {
      ok: false,
      message: `变量 ${tooLong.join('、')} 的值不能超过 ${SMS_VARIABLE_MAX_LENGTH} 个字符`,
    };
  }
  const trimmed = Object.fromEntries(names.map((name) => [name, values[name]?.trim() ?? '']));
  const content = smsSignatureText(signatureName) + renderSmsTemplate(templateContent, trimmed);
  return { ok: true, content, parts: smsParts(content).length };
}

const chinaHour = (at: Date) => new Date(at.getTime() + CHINA_OFFSET_MS).getUTCHours();

/**
 * When a 推广 SMS composed at `now` may go out: null inside 08:00–20:00 China time, else the next
 * 08:00 (China has no daylight saving, so a fixed offset is exact).
 */
export function marketingSendAfter(now: Date): Date | null {
  const hour = chinaHour(now);
  if (hour >= SMS_MARKETING_WINDOW.startHour && hour < SMS_MARKETING_WINDOW.endHour) return null;
  const today = chinaDayStart(chinaDay(now));
  const start = new Date(today.getTime() + SMS_MARKETING_WINDOW.startHour * 3_600_000);
  return hour < SMS_MARKETING_WINDOW.startHour ? start : new Date(start.getTime() + 86_400_000);
}

/** Why a waiting message waits, for its timeline. */
export function waitingDetail(sendAfter: Date): string {
  const at = new Date(sendAfter.getTime() + CHINA_OFFSET_MS).toISOString();
  return `推广短信仅在 ${SMS_MARKETING_WINDOW.startHour}:00–${SMS_MARKETING_WINDOW.endHour}:00（北京时间）发送，将于 ${at.slice(5, 10)} ${at.slice(11, 16)} 发出`;
}

/** The China day's start for `at`: the daily cap counts from there. */
export const chinaDayStartOf = (at: Date) => chinaDayStart(chinaDay(at));

const OPT_OUT = new Set<string>(SMS_OPT_OUT_REPLIES);
/**
 * A reply that opts out: T, TD, 退订, R or N on its own, in any case, with the punctuation and
 * spaces people add ("td。", " 退订 "). A sentence that merely contains one of them does not.
 */
export function isOptOutReply(text: string): boolean {
  const bare = text
    .normalize('NFKC')
    .replace(/[\s\p{P}\p{S}]/gu, '')
    .toUpperCase();
  return OPT_OUT.has(bare);
}
