import type { ProjectNumber } from '@callpilot/contracts';
import { createContext, type ReactNode, useContext, useMemo, useState } from 'react';
import { InboundTestCallDialog } from '@/entities/call/components/inbound-test-call-dialog';
import { IvrInboundDialog } from './ivr-inbound-dialog';
import { IvrNumberFormDialog } from './ivr-number-form-dialog';

/** The one dialog the section may show at a time, with the number it works on. */
export type IvrDialog =
  | { type: 'add-number' }
  | { type: 'edit-number'; number: ProjectNumber }
  | { type: 'inbound'; number: ProjectNumber }
  | { type: 'simulate-inbound'; number: ProjectNumber };

type IvrDialogsContext = { open: (dialog: IvrDialog) => void; close: () => void };

const DialogsContext = createContext<IvrDialogsContext | null>(null);

export function useIvrDialogs(): IvrDialogsContext {
  const context = useContext(DialogsContext);
  if (!context) throw new Error('useIvrDialogs needs <IvrDialogsProvider>');
  return context;
}

/** Holds the section's open dialog and renders it, so pages only say which one to open. */
export function IvrDialogsProvider({ projectId, children }: { projectId: string; children: ReactNode }) {
  const [dialog, setDialog] = useState<IvrDialog | null>(null);
  const context = useMemo(() => ({ open: setDialog, close: () => setDialog(null) }), []);
  return (
    <DialogsContext.Provider value={context}>
      {children}
      {(dialog?.type === 'add-number' || dialog?.type === 'edit-number') && (
        <IvrNumberFormDialog
          projectId={projectId}
          number={dialog.type === 'edit-number' ? dialog.number : undefined}
          onClose={context.close}
        />
      )}
      {dialog?.type === 'inbound' && (
        <IvrInboundDialog projectId={projectId} number={dialog.number} onClose={context.close} />
      )}
      {dialog?.type === 'simulate-inbound' && (
        <InboundTestCallDialog
          open
          projectId={projectId}
          numbers={[
            {
              number: dialog.number.number,
              label: dialog.number.label,
              assistantName: dialog.number.inboundAssistantName,
            },
          ]}
          onClose={context.close}
        />
      )}
    </DialogsContext.Provider>
  );
}
