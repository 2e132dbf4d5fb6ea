import { createBrowserRouter, type RouteObject, redirect } from 'react-router';
import { paths } from '@/config/paths';
import { RootLayout } from './root-layout';
import { RouteErrorPage } from './route-error-page';
import { RouteFallback } from './route-fallback';

// Redirects are loaders, not <Navigate> elements, so they resolve before the first render and the
// visitor sees 加载中... until the destination's code is in, instead of a blank flash. Their
// `element: null` only tells the router the empty render is intended.
export const routes: RouteObject[] = [
  {
    path: paths.home,
    Component: RootLayout,
    errorElement: <RouteErrorPage />,
    HydrateFallback: RouteFallback,
    children: [
      { index: true, loader: () => redirect(paths.dashboard), element: null },
      {
        path: paths.login,
        lazy: async () => ({ Component: (await import('@/features/auth/pages/login-page')).LoginPage }),
      },
      {
        path: paths.signup,
        lazy: async () => ({ Component: (await import('@/features/auth/pages/signup-page')).SignupPage }),
      },
      {
        path: paths.forgetPassword,
        lazy: async () => ({
          Component: (await import('@/features/auth/pages/forget-password-page')).ForgetPasswordPage,
        }),
      },
      {
        path: paths.thirdLogin,
        lazy: async () => ({
          Component: (await import('@/features/auth/pages/third-login-page')).ThirdLoginPage,
        }),
      },
      {
        path: paths.accountInfo,
        lazy: async () => ({
          Component: (await import('@/features/account/pages/account-info-page')).AccountInfoPage,
        }),
      },
      {
        path: paths.dashboard,
        lazy: async () => ({
          Component: (await import('@/features/dashboard/pages/dashboard-page')).DashboardPage,
        }),
      },
      { path: '*', loader: () => redirect(paths.home), element: null },
    ],
  },
];

export function createAppRouter() {
  return createBrowserRouter(routes);
}
