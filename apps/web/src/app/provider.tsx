import { StyleProvider } from '@ant-design/cssinjs';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { ConfigProvider, type ThemeConfig } from 'antd';
import zhCN from 'antd/locale/zh_CN';
import dayjs from 'dayjs';
import 'dayjs/locale/zh-cn';
import { type ReactNode, useState } from 'react';
import { Toaster } from 'sonner';
import { TopProgressBar } from '@/components/top-progress-bar';

dayjs.locale('zh-cn');

const theme: ThemeConfig = {
  token: {
    colorPrimary: '#4D8EFF',
    colorError: '#FF5656',
    controlHeight: 32,
    controlHeightLG: 38,
    controlHeightSM: 24,
  },
};

// Labels read exactly as written (登录, not antd's spaced 登 录), for users and for text queries alike.
const buttonConfig = { autoInsertSpace: false };

export function createQueryClient(): QueryClient {
  return new QueryClient({
    defaultOptions: {
      // The request client already reports every failure; a query retry would toast it again.
      queries: { retry: false },
      mutations: { retry: false },
    },
  });
}

export function AppProvider({ children }: { children: ReactNode }) {
  const [queryClient] = useState(createQueryClient);
  return (
    // antd emits into the `antd` cascade layer (see index.css), between Tailwind's reset and its utilities.
    <StyleProvider layer>
      <ConfigProvider locale={zhCN} theme={theme} button={buttonConfig}>
        <QueryClientProvider client={queryClient}>
          <TopProgressBar />
          {children}
          {/* Top-right as the spec says, but below the page header, whose top-right corner holds
              the page's actions (导出, 暂停/继续...): a toast there would cover the next click. */}
          <Toaster position="top-right" offset={{ top: 88 }} closeButton richColors />
        </QueryClientProvider>
      </ConfigProvider>
    </StyleProvider>
  );
}
