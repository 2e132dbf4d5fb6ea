// First: before any module builds or parses a schema (see the file).
import '@/lib/zod-jitless';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { RouterProvider } from 'react-router';
import { CoreProvider } from '@/app/core-provider';
import { createAppRouter } from '@/app/router';
import { setRequestNavigator } from '@/lib/request';
import './index.css';

const router = createAppRouter();
setRequestNavigator((to) => {
  void router.navigate(to);
});

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <CoreProvider>
      <RouterProvider router={router} />
    </CoreProvider>
  </StrictMode>,
);
