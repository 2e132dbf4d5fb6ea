import type { ApiKey, ApiKeyCreated } from '@callpilot/contracts';
import { createContext, type ReactNode, useContext, useMemo, useState } from 'react';
import { ApiKeyFormDialog } from './api-key-form-dialog';
import { ApiKeyRequestsDrawer } from './api-key-requests-drawer';
import { ApiKeyRollDialog } from './api-key-roll-dialog';
import { ApiKeySecretDialog } from './api-key-secret-dialog';

/** The one dialog the keys page may show at a time, with the key it works on. */
export type ApiKeyDialog =
  | { type: 'create' }
  | { type: 'edit'; apiKey: ApiKey }
  | { type: 'roll'; apiKey: ApiKey }
  | { type: 'secret'; created: ApiKeyCreated; reason: 'create' | 'roll' }
  | { type: 'requests'; apiKey: ApiKey };

type ApiKeyDialogsContext = { open: (dialog: ApiKeyDialog) => void; close: () => void };

const DialogsContext = createContext<ApiKeyDialogsContext | null>(null);

export function useApiKeyDialogs(): ApiKeyDialogsContext {
  const context = useContext(DialogsContext);
  if (!context) throw new Error('useApiKeyDialogs needs <ApiKeyDialogsProvider>');
  return context;
}

/** Holds the page's open dialog and renders it; a create or roll hands over to the secret dialog. */
export function ApiKeyDialogsProvider({ projectId, children }: { projectId: string; children: ReactNode }) {
  const [dialog, setDialog] = useState<ApiKeyDialog | null>(null);
  const context = useMemo(() => ({ open: setDialog, close: () => setDialog(null) }), []);
  return (
    <DialogsContext.Provider value={context}>
      {children}
      {(dialog?.type === 'create' || dialog?.type === 'edit') && (
        <ApiKeyFormDialog
          projectId={projectId}
          {...(dialog.type === 'edit' ? { apiKey: dialog.apiKey } : {})}
          onClose={context.close}
          onCreated={(created) => setDialog({ type: 'secret', created, reason: 'create' })}
        />
      )}
      {dialog?.type === 'roll' && (
        <ApiKeyRollDialog
          projectId={projectId}
          apiKey={dialog.apiKey}
          onClose={context.close}
          onRolled={(created) => setDialog({ type: 'secret', created, reason: 'roll' })}
        />
      )}
      {dialog?.type === 'secret' && (
        <ApiKeySecretDialog created={dialog.created} reason={dialog.reason} onClose={context.close} />
      )}
      {dialog?.type === 'requests' && (
        <ApiKeyRequestsDrawer projectId={projectId} apiKey={dialog.apiKey} onClose={context.close} />
      )}
    </DialogsContext.Provider>
  );
}
