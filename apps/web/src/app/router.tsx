import type { ComponentType } from 'react';
import { createBrowserRouter, type RouteObject, redirect } from 'react-router';
import { RouteFallback } from '@/components/route-fallback';
import { type Section, type SectionKey, sections } from '@/config/nav';
import { paths } from '@/config/paths';
import { RootLayout } from './root-layout';
import { RouteErrorPage } from './route-error-page';

type LazyPage = () => Promise<{ Component: ComponentType }>;

// Each section is one lazy chunk, shared by all of its paths. The Record makes a section added
// to the table without a page a type error.
const sectionPages: Record<SectionKey, LazyPage> = {
  dashboard: async () => ({
    Component: (await import('@/features/dashboard/pages/dashboard-page')).DashboardPage,
  }),
  callRecord: async () => ({
    Component: (await import('@/features/call-record/pages/call-record-section')).CallRecordSection,
  }),
  callTask: async () => ({
    Component: (await import('@/features/call-task/pages/call-task-section')).CallTaskSection,
  }),
  ivr: async () => ({ Component: (await import('@/features/ivr/pages/ivr-section')).IvrSection }),
  assistant: async () => ({
    Component: (await import('@/features/assistant/pages/assistant-section')).AssistantSection,
  }),
  knowledge: async () => ({
    Component: (await import('@/features/knowledge/pages/knowledge-section')).KnowledgeSection,
  }),
  dataReport: async () => ({
    Component: (await import('@/features/data-report/pages/data-report-section')).DataReportSection,
  }),
  sms: async () => ({ Component: (await import('@/features/sms/pages/sms-section')).SmsSection }),
  developerOptions: async () => ({
    Component: (await import('@/features/developer/pages/developer-section')).DeveloperSection,
  }),
  accountInfo: async () => ({
    Component: (await import('@/features/account/pages/account-info-page')).AccountInfoPage,
  }),
};

function sectionRoutes(section: Section): RouteObject[] {
  const { redirectTo } = section;
  const pages: RouteObject[] = section.routes.map((path) => ({ path, lazy: sectionPages[section.key] }));
  return redirectTo
    ? [{ path: section.url, loader: () => redirect(redirectTo), element: null }, ...pages]
    : pages;
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
        // Every page but /login uses antd: its provider comes with them, in a chunk of its own.
        lazy: async () => ({ Component: (await import('./antd-layout')).AntdLayout }),
        children: [
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
            path: paths.invite,
            lazy: async () => ({
              Component: (await import('@/features/account/pages/invite-page')).InvitePage,
            }),
          },
          {
            // The authenticated shell is its own chunk, so the public pages never load the sidebar.
            lazy: async () => ({ Component: (await import('@/components/layout/app-shell')).AppShell }),
            children: sections.flatMap(sectionRoutes),
          },
        ],
      },
      { path: '*', loader: () => redirect(paths.home), element: null },
    ],
  },
];

export function createAppRouter() {
  return createBrowserRouter(routes);
}
