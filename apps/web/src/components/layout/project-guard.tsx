import { Button, Modal } from 'antd';
import { type ReactNode, useState } from 'react';
import { Navigate, useLocation } from 'react-router';
import { paths } from '@/config/paths';
import { useConsoleConfig } from '@/lib/api/get-console-config';
import { useCurrentUser } from '@/lib/api/get-current-user';

/**
 * A user without a project, or whose first project is disabled, is told to contact sales; while
 * that project is disabled only the dashboard is reachable.
 */
export function ProjectGuard({ children }: { children: ReactNode }) {
  const { pathname } = useLocation();
  const user = useCurrentUser().data;
  const firstProject = user?.projects[0];
  const notActivated = user !== undefined && (firstProject === undefined || firstProject.disabled);
  const [dismissed, setDismissed] = useState(false);
  const config = useConsoleConfig({ enabled: notActivated });

  if (firstProject?.disabled && pathname !== paths.dashboard) {
    return <Navigate to={paths.dashboard} replace />;
  }

  return (
    <>
      {children}
      {/* Unmounted once confirmed, so nothing of it lingers in the page. Held back until the
          sales number is known: a dialog that fills in a moment later looks broken. Should the
          number not load, the dialog still tells the user to contact sales. */}
      {notActivated && !dismissed && !config.isPending && (
        <Modal
          open
          title="提示"
          closable={false}
          mask={{ closable: false }}
          onCancel={() => setDismissed(true)}
          footer={
            <Button type="primary" onClick={() => setDismissed(true)}>
              确定
            </Button>
          }
        >
          <p>
            {config.data?.salesPhone
              ? `您的项目尚未开通，请联系销售开通，销售电话：${config.data.salesPhone}`
              : '您的项目尚未开通，请联系销售开通'}
          </p>
        </Modal>
      )}
    </>
  );
}
