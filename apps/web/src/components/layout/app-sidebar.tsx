import MenuFoldOutlined from '@ant-design/icons/MenuFoldOutlined';
import MenuUnfoldOutlined from '@ant-design/icons/MenuUnfoldOutlined';
import { Link, useLocation, useNavigate } from 'react-router';
import { Button } from '@/components/ui/button';
import {
  DropdownMenu,
  DropdownMenuContent,
  DropdownMenuItem,
  DropdownMenuTrigger,
} from '@/components/ui/dropdown-menu';
import { Tooltip, TooltipContent, TooltipTrigger } from '@/components/ui/tooltip';
import { isNavItemActive, navGroups } from '@/config/nav';
import { paths } from '@/config/paths';
import { useLogout } from '@/lib/api/logout';
import { cn } from '@/lib/utils';
import { useOemStore } from '@/stores/oem-store';
import { useUserStore } from '@/stores/user-store';
import { Avatar } from './avatar';
import { DefaultLogo } from './default-logo';

const DEFAULT_PRODUCT_NAME = '智能语音外呼平台';

function SidebarLogo({ collapsed }: { collapsed: boolean }) {
  const { isOem, replaceLogo, replaceName } = useOemStore();
  const name = isOem ? replaceName : DEFAULT_PRODUCT_NAME;
  return (
    <Link
      to={paths.dashboard}
      className="flex min-w-0 items-center gap-2 px-1"
      aria-label={name || DEFAULT_PRODUCT_NAME}
    >
      {isOem && replaceLogo ? (
        <img src={replaceLogo} alt={name} className="size-8 shrink-0 object-contain" />
      ) : (
        <DefaultLogo className="size-8 shrink-0" />
      )}
      {!collapsed && <span className="truncate font-semibold text-gray-900">{name}</span>}
    </Link>
  );
}

function SidebarUser({ collapsed }: { collapsed: boolean }) {
  const navigate = useNavigate();
  const userInfo = useUserStore((state) => state.userInfo);
  const logout = useLogout({ onSettled: () => navigate(paths.login, { replace: true }) });
  const name = userInfo.displayName || userInfo.email || '-';
  return (
    <DropdownMenu>
      <DropdownMenuTrigger asChild>
        <button
          type="button"
          aria-label={`用户菜单：${name}`}
          className={cn(
            'flex w-full min-w-0 cursor-pointer items-center gap-2 rounded-md text-left hover:bg-gray-100',
            collapsed ? 'justify-center p-1' : 'p-2',
          )}
        >
          <Avatar name={name} />
          {!collapsed && (
            <span className="flex min-w-0 flex-col">
              <span className="truncate text-sm font-medium text-gray-900">{name}</span>
              <span className="truncate text-xs text-gray-500">{userInfo.email || '-'}</span>
            </span>
          )}
        </button>
      </DropdownMenuTrigger>
      <DropdownMenuContent side="top" align="start" className="w-56">
        <DropdownMenuItem disabled={logout.isPending} onSelect={() => logout.mutate()}>
          退出登录
        </DropdownMenuItem>
      </DropdownMenuContent>
    </DropdownMenu>
  );
}

export function AppSidebar({
  collapsed,
  onToggleCollapsed,
}: {
  collapsed: boolean;
  onToggleCollapsed: () => void;
}) {
  const { pathname } = useLocation();
  const toggleLabel = collapsed ? '展开导航' : '折叠导航';
  return (
    <aside
      className="flex h-full w-full flex-col gap-2 overflow-hidden bg-white py-3"
      style={{ maxWidth: collapsed ? 64 : 240 }}
    >
      {/* Collapsed, the spec's 4% minimum can be narrower than 64 px: paddings shrink so nothing is cut. */}
      <div className={cn('flex items-center gap-1', collapsed ? 'flex-col px-1' : 'justify-between px-3')}>
        <SidebarLogo collapsed={collapsed} />
        <Tooltip>
          <TooltipTrigger asChild>
            <Button variant="ghost" size="icon" aria-label={toggleLabel} onClick={onToggleCollapsed}>
              <span aria-hidden="true" className="inline-flex">
                {collapsed ? <MenuUnfoldOutlined /> : <MenuFoldOutlined />}
              </span>
            </Button>
          </TooltipTrigger>
          <TooltipContent side="right">{toggleLabel}</TooltipContent>
        </Tooltip>
      </div>
      <nav
        aria-label="主导航"
        className={cn('flex min-h-0 flex-1 flex-col gap-3 overflow-y-auto', collapsed ? 'px-1' : 'px-2')}
      >
        {navGroups.map((group) => (
          <div key={group.title || 'main'} className="flex flex-col gap-1">
            {group.title && !collapsed && <p className="px-2 text-xs text-gray-400">{group.title}</p>}
            {group.items.map((item) => {
              const active = isNavItemActive(pathname, item.url);
              const Icon = item.icon;
              return (
                <Link
                  key={item.url}
                  to={item.url}
                  title={collapsed ? item.label : undefined}
                  aria-label={collapsed ? item.label : undefined}
                  aria-current={active ? 'page' : undefined}
                  className={cn(
                    'flex items-center gap-2 rounded-md px-2 py-2 text-sm text-gray-700 hover:bg-gray-100',
                    collapsed && 'justify-center',
                    active && 'bg-[#4D8EFF]/10 font-medium text-[#4D8EFF] hover:bg-[#4D8EFF]/10',
                  )}
                >
                  <span aria-hidden="true" className="inline-flex">
                    <Icon />
                  </span>
                  {!collapsed && <span className="truncate">{item.label}</span>}
                </Link>
              );
            })}
          </div>
        ))}
      </nav>
      <div className={collapsed ? 'px-1' : 'px-2'}>
        <SidebarUser collapsed={collapsed} />
      </div>
    </aside>
  );
}
