import { chinaTime } from '@/lib/format';

/** Review times as China's wall clock, like the rest of the console; '-' before it happened. */
export const formatSmsTime = (at: string | null) => (at ? chinaTime(at).format('YYYY-MM-DD HH:mm') : '-');

/** A signature as it appears at the head of every message. */
export const bracketed = (name: string) => `【${name}】`;
