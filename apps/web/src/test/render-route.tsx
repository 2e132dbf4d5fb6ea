import { render } from '@testing-library/react';
import type { ReactNode } from 'react';
import { createMemoryRouter, type RouteObject, RouterProvider } from 'react-router';
import { AppProvider } from '@/app/provider';
import { routes } from '@/app/router';
import { setRequestNavigator } from '@/lib/request';

/**
 * Renders one page at `entry` inside the real providers, with stand-ins for the pages it may
 * navigate to, so a test can assert where the user ended up.
 */
export function renderRoute(
  entry: string,
  page: { path: string; element: ReactNode },
  others: string[] = [],
) {
  const router = createMemoryRouter(
    [page, ...others.map((path) => ({ path, element: <p>{`page ${path}`}</p> }))],
    { initialEntries: [entry] },
  );
  setRequestNavigator((to) => {
    void router.navigate(to);
  });
  render(
    <AppProvider>
      <RouterProvider router={router} />
    </AppProvider>,
  );
  return router;
}

/** The whole console (every route, lazy pages included) at `entry`, as the browser would load it. */
export function renderApp(entry: string, appRoutes: RouteObject[] = routes) {
  const router = createMemoryRouter(appRoutes, { initialEntries: [entry] });
  setRequestNavigator((to) => {
    void router.navigate(to);
  });
  render(
    <AppProvider>
      <RouterProvider router={router} />
    </AppProvider>,
  );
  return router;
}

/** `METHOD /path` → reply, for fake servers that answer by route. */
export function routeKey(request: { method: string; url: string }): string {
  return `${request.method} ${request.url}`;
}
