export const paths = {
  home: '/',
  login: '/login',
  signup: '/signup',
  forgetPassword: '/forget-password',
  thirdLogin: '/third-login',
  dashboard: '/dashboard',
  accountInfo: '/account-info',
} as const;

/** The login URL that brings the user back to `returnTo` (path + query) after signing in. */
export function loginHref(returnTo?: string): string {
  return returnTo ? `${paths.login}?redirect=${encodeURIComponent(returnTo)}` : paths.login;
}
