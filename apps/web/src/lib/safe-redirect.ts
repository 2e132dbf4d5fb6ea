import { paths } from '@/config/paths';

/**
 * Only same-origin paths: `//host` and `/\host` are read by browsers as another origin, which
 * would turn a login page into an open redirect.
 */
export function safeRedirect(target: string | null | undefined, fallback: string = paths.dashboard): string {
  if (!target?.startsWith('/') || target.startsWith('//') || target.startsWith('/\\')) return fallback;
  return target;
}
