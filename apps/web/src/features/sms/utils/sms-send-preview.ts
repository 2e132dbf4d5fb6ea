import {
  renderSmsTemplate,
  SMS_MARKETING_WINDOW,
  type SmsTemplateType,
  smsLength,
  smsParts,
  smsSignatureText,
} from '@callpilot/contracts';

const CHINA_OFFSET_MS = 8 * 3_600_000;

/** The exact text a send produces (【签名】 + the template with the values typed so far). */
export function smsSendPreview(
  signatureName: string | undefined,
  content: string,
  values: Record<string, string | undefined>,
) {
  // A variable not typed yet stays as ${name}, so the preview shows what is still missing.
  const filled = Object.fromEntries(
    Object.entries(values).filter((entry): entry is [string, string] => Boolean(entry[1]?.trim())),
  );
  const text = smsSignatureText(signatureName) + renderSmsTemplate(content, filled);
  return { text, length: smsLength(text), parts: smsParts(text).length };
}

/**
 * For 推广 outside 08:00–20:00 China time (no daylight saving, so a fixed offset is exact): when it
 * will go out, as the user reads it; null when it goes now. The server decides; this only says so.
 */
export function marketingWaitNotice(type: SmsTemplateType | undefined, now: number): string | null {
  if (type !== 'marketing') return null;
  const hour = new Date(now + CHINA_OFFSET_MS).getUTCHours();
  if (hour >= SMS_MARKETING_WINDOW.startHour && hour < SMS_MARKETING_WINDOW.endHour) return null;
  const day = hour < SMS_MARKETING_WINDOW.startHour ? '今天' : '明天';
  const { startHour, endHour } = SMS_MARKETING_WINDOW;
  const start = `${String(startHour).padStart(2, '0')}:00`;
  return `推广短信仅在 ${startHour}:00–${endHour}:00（北京时间）发送，现在提交将等待至${day} ${start} 发出`;
}
