import type { ReactNode } from 'react';
import { AntdProvider } from './antd-provider';
import { CoreProvider } from './core-provider';

export { createQueryClient } from './core-provider';

/**
 * Every provider a page may need, antd's included: for tests and anything rendered outside the
 * router. The browser entry (main.tsx) uses CoreProvider and leaves antd to the routes.
 */
export function AppProvider({ children }: { children: ReactNode }) {
  return (
    <CoreProvider>
      <AntdProvider>{children}</AntdProvider>
    </CoreProvider>
  );
}
