import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { type ReactNode, useState } from 'react';
import { Toaster } from 'sonner';
import { TopProgressBar } from '@/components/top-progress-bar';

export function createQueryClient(): QueryClient {
  return new QueryClient({
    defaultOptions: {
      // The request client already reports every failure; a query retry would toast it again.
      queries: { retry: false },
      mutations: { retry: false },
    },
  });
}

/**
 * What every page needs, /login included: server state, the progress bar and toasts. antd's
 * provider is not here but on the routes that use antd (antd-layout.tsx), to keep /login light.
 */
export function CoreProvider({ children }: { children: ReactNode }) {
  const [queryClient] = useState(createQueryClient);
  return (
    <QueryClientProvider client={queryClient}>
      <TopProgressBar />
      {children}
      {/* Top-right as the spec says, but below the page header, whose top-right corner holds
          the page's actions (导出, 暂停/继续...): a toast there would cover the next click. */}
      <Toaster position="top-right" offset={{ top: 88 }} closeButton richColors />
    </QueryClientProvider>
  );
}
