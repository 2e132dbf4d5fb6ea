import { useEffect } from 'react';
import { Outlet, useLocation, useNavigation } from 'react-router';
import { loadOemInfoOnce } from '@/lib/api/get-oem-info';
import { useHistoryStore } from '@/stores/local-values';

// Later navigations keep the current page on screen while the next page's code loads, so the
// loading text is shown on top of it rather than instead of it.
export function RootLayout() {
  const navigation = useNavigation();
  const { pathname, search } = useLocation();
  const pushPath = useHistoryStore((state) => state.pushPath);
  useEffect(() => {
    pushPath(`${pathname}${search}`);
  }, [pathname, search, pushPath]);
  // White-label branding by host name, once per page load.
  useEffect(() => {
    void loadOemInfoOnce();
  }, []);
  return (
    <>
      {navigation.state === 'loading' && (
        <div
          role="status"
          className="fixed top-3 left-1/2 z-50 -translate-x-1/2 rounded-full bg-white px-4 py-1 text-sm text-gray-500 shadow"
        >
          加载中...
        </div>
      )}
      <Outlet />
    </>
  );
}
