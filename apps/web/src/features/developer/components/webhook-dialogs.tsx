import type { WebhookEndpoint } from '@callpilot/contracts';
import { createContext, type ReactNode, useContext, useMemo, useState } from 'react';
import { WebhookDeliveryDrawer } from './webhook-delivery-drawer';
import { WebhookEndpointFormDialog } from './webhook-endpoint-form-dialog';
import { WebhookRollSecretDialog } from './webhook-roll-secret-dialog';
import { WebhookTestDialog } from './webhook-test-dialog';

/** The one dialog the webhook pages may show at a time, with what it works on. */
export type WebhookDialog =
  | { type: 'create'; onCreated?: (endpoint: WebhookEndpoint) => void }
  | { type: 'edit'; endpoint: WebhookEndpoint }
  | { type: 'test'; endpoint: WebhookEndpoint }
  | { type: 'roll-secret'; endpointId: string; onRolled: (secret: string) => void }
  | { type: 'delivery'; endpointId: string; deliveryId: string };

type WebhookDialogsContext = { open: (dialog: WebhookDialog) => void; close: () => void };

const DialogsContext = createContext<WebhookDialogsContext | null>(null);

export function useWebhookDialogs(): WebhookDialogsContext {
  const context = useContext(DialogsContext);
  if (!context) throw new Error('useWebhookDialogs needs <WebhookDialogsProvider>');
  return context;
}

/** Holds the open dialog of the webhook pages and renders it, so pages only say which one to open. */
export function WebhookDialogsProvider({
  projectId,
  canManage,
  children,
}: {
  projectId: string;
  canManage: boolean;
  children: ReactNode;
}) {
  const [dialog, setDialog] = useState<WebhookDialog | null>(null);
  const context = useMemo(() => ({ open: setDialog, close: () => setDialog(null) }), []);
  return (
    <DialogsContext.Provider value={context}>
      {children}
      {(dialog?.type === 'create' || dialog?.type === 'edit') && (
        <WebhookEndpointFormDialog
          projectId={projectId}
          {...(dialog.type === 'edit' ? { endpoint: dialog.endpoint } : {})}
          {...(dialog.type === 'create' && dialog.onCreated ? { onCreated: dialog.onCreated } : {})}
          onClose={context.close}
        />
      )}
      {dialog?.type === 'test' && (
        <WebhookTestDialog projectId={projectId} endpoint={dialog.endpoint} onClose={context.close} />
      )}
      {dialog?.type === 'roll-secret' && (
        <WebhookRollSecretDialog
          projectId={projectId}
          endpointId={dialog.endpointId}
          onRolled={dialog.onRolled}
          onClose={context.close}
        />
      )}
      {dialog?.type === 'delivery' && (
        <WebhookDeliveryDrawer
          projectId={projectId}
          endpointId={dialog.endpointId}
          deliveryId={dialog.deliveryId}
          canManage={canManage}
          onClose={context.close}
        />
      )}
    </DialogsContext.Provider>
  );
}
