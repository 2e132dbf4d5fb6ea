// Plain patterns instead of the contracts' zod schemas: the login page is the first thing a visitor
// loads and must stay small. They accept what the contracts' `email` and `phone` rules accept.
const EMAIL_PATTERN = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const MOBILE_PATTERN = /^(?:\+?86)?1[3-9]\d{9}$/;

export type Identifier = { email: string } | { phone: string };

const compact = (raw: string) => raw.trim().replace(/[\s-]/g, '');

export function isMobile(raw: string): boolean {
  return MOBILE_PATTERN.test(compact(raw));
}

/** The bare 11 digits of a mainland mobile number written with or without +86, spaces or dashes. */
export function normalizeMobile(raw: string): string {
  return compact(raw).slice(-11);
}

/** Reads what a visitor typed into 邮箱/手机号: a mainland mobile number, or an e-mail address. */
export function parseIdentifier(raw: string): Identifier | undefined {
  if (isMobile(raw)) return { phone: normalizeMobile(raw) };
  const email = raw.trim();
  return EMAIL_PATTERN.test(email) ? { email } : undefined;
}
