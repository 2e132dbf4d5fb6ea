import { Tooltip } from 'antd';
import type { ReactElement } from 'react';

export const MANAGE_ONLY_TEXT = '仅项目所有者或管理员可操作';

/**
 * An owner/admin action as a member sees it: disabled, saying why on hover. The span carries the
 * tooltip because a disabled button fires no mouse events of its own.
 */
export function DeveloperManageGate({ canManage, children }: { canManage: boolean; children: ReactElement }) {
  if (canManage) return children;
  return (
    <Tooltip title={MANAGE_ONLY_TEXT}>
      <span className="inline-flex cursor-not-allowed">{children}</span>
    </Tooltip>
  );
}
