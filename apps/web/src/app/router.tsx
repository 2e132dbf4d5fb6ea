import type { ComponentType } from 'react';
import { createBrowserRouter, type RouteObject, redirect } from 'react-router';
import { paths } from '@/config/paths';
import { RootLayout } from './root-layout';
import { RouteErrorPage } from './route-error-page';
import { RouteFallback } from './route-fallback';

type LazyPage = () => Promise<{ Component: ComponentType }>;

// Each section is one lazy chunk, shared by all of its paths.
const callRecordPage: LazyPage = async () => ({
  Component: (await import('./pages/call-record-page')).CallRecordPage,
});
const callTaskPage: LazyPage = async () => ({
  Component: (await import('./pages/call-task-page')).CallTaskPage,
});
const ivrPage: LazyPage = async () => ({ Component: (await import('./pages/ivr-page')).IvrPage });
const assistantPage: LazyPage = async () => ({
  Component: (await import('./pages/assistant-page')).AssistantPage,
});
const knowledgePage: LazyPage = async () => ({
  Component: (await import('./pages/knowledge-page')).KnowledgePage,
});
const dataReportPage: LazyPage = async () => ({
  Component: (await import('./pages/data-report-page')).DataReportPage,
});
const smsPage: LazyPage = async () => ({ Component: (await import('./pages/sms-page')).SmsPage });
const developerOptionsPage: LazyPage = async () => ({
  Component: (await import('./pages/developer-options-page')).DeveloperOptionsPage,
});

function section(sectionPaths: string[], lazy: LazyPage): RouteObject[] {
  return sectionPaths.map((path) => ({ path, lazy }));
}

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
        // The authenticated shell is its own chunk, so the public pages never load the sidebar.
        lazy: async () => ({ Component: (await import('@/components/layout/app-shell')).AppShell }),
        children: [
          {
            path: paths.dashboard,
            lazy: async () => ({
              Component: (await import('@/features/dashboard/pages/dashboard-page')).DashboardPage,
            }),
          },
          {
            path: paths.accountInfo,
            lazy: async () => ({
              Component: (await import('@/features/account/pages/account-info-page')).AccountInfoPage,
            }),
          },
          { path: paths.callRecord, loader: () => redirect(paths.callRecordList), element: null },
          ...section(['/call-record/list', '/call-record/detail/:id'], callRecordPage),
          { path: paths.callTask, loader: () => redirect(paths.callTaskList), element: null },
          ...section(
            [
              '/call-task/list',
              '/call-task/add',
              '/call-task/task-detail/:id',
              '/call-task/task-detail-list',
            ],
            callTaskPage,
          ),
          { path: paths.assistant, loader: () => redirect(paths.assistantList), element: null },
          ...section(
            ['/assistant/list', '/assistant/template', '/assistant/prompt-edit', '/assistant/:editType'],
            assistantPage,
          ),
          ...section(['/ivr/*'], ivrPage),
          ...section(['/knowledge/*'], knowledgePage),
          ...section(['/sms/*'], smsPage),
          ...section(['/developer-options/*'], developerOptionsPage),
          { path: paths.dataReport, loader: () => redirect(paths.dataReportCallin), element: null },
          ...section(
            ['/data-report/callin', '/data-report/assistant', '/data-report/knowledge'],
            dataReportPage,
          ),
        ],
      },
      { path: '*', loader: () => redirect(paths.home), element: null },
    ],
  },
];

export function createAppRouter() {
  return createBrowserRouter(routes);
}
