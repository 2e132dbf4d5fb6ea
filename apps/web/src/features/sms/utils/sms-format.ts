import { chinaTime } from '@/lib/format';

/** Review times as China's wall clock, like the rest of the console; '-' before it happened. */
export const formatSmsTime = (at: string | null) => (at ? chinaTime(at).format('YYYY-MM-DD HH:mm') : '-');

/** A signature as it appears at the head of every message. */
export const bracketed = (name: string) => `【${name}】`;

/** A send record's time to the second: receipts arrive seconds apart. */
export const formatSmsMessageTime = (at: string | null) =>
  at ? chinaTime(at).format('YYYY-MM-DD HH:mm:ss') : '-';

/** Why a message failed or was never sent: the carrier's code and its reason. */
export const smsFailureText = (m: {
  status: string;
  errorCode: string | null;
  errorMessage: string | null;
}) =>
  m.status === 'failed' || m.status === 'blocked'
    ? [m.errorCode, m.errorMessage].filter(Boolean).join(' ')
    : '';
