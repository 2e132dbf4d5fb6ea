import { StyleProvider } from '@ant-design/cssinjs';
import { ConfigProvider, type ThemeConfig } from 'antd';
import zhCN from 'antd/locale/zh_CN';
import dayjs from 'dayjs';
import 'dayjs/locale/zh-cn';
import type { ReactNode } from 'react';

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

/**
 * antd's theme, zh-CN locale and cascade layer, with dayjs in Chinese. Its own module, loaded by
 * the routes that use antd (see antd-layout.tsx): /login renders without antd, so a first visit
 * does not download it.
 */
export function AntdProvider({ children }: { children: ReactNode }) {
  return (
    // antd emits into the `antd` cascade layer (see index.css), between Tailwind's reset and its utilities.
    <StyleProvider layer>
      <ConfigProvider locale={zhCN} theme={theme} button={buttonConfig}>
        {children}
      </ConfigProvider>
    </StyleProvider>
  );
}
