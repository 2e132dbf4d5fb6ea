import type { ReactNode } from 'react';
import { useLocation } from 'react-router';
import { RowLink } from '@/components/row-link';
import { useQueryCacheStore } from '@/stores/query-cache-store';
import { callDetailPath } from '../utils/call-paths';

/**
 * Opens a call's detail through a real link (ctrl-click or a middle click: a new tab, so staff can
 * compare calls side by side). Following it remembers this page for the detail's 返回.
 */
export function CallDetailLink({
  callId,
  onOpen,
  className,
  children,
}: {
  callId: string;
  /** Called as the link is followed, in this tab or a new one (a list saves its filters and page). */
  onOpen?: () => void;
  className?: string;
  children: ReactNode;
}) {
  const location = useLocation();
  return (
    <RowLink
      to={callDetailPath(callId)}
      className={className}
      onFollow={() => {
        useQueryCacheStore.getState().setCallDetailBackUrl(`${location.pathname}${location.search}`);
        onOpen?.();
      }}
    >
      {children}
    </RowLink>
  );
}
