import { Outlet } from 'react-router';
import { AntdProvider } from './antd-provider';

/** The layout route of every page but /login: they all use antd. */
export function AntdLayout() {
  return (
    <AntdProvider>
      <Outlet />
    </AntdProvider>
  );
}
