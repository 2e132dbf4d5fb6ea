import type { ProjectNumber, Trunk } from '@callpilot/contracts';
import { createContext, type ReactNode, useContext, useMemo, useState } from 'react';
import { InboundTestCallDialog } from '@/entities/call/components/inbound-test-call-dialog';
import { IvrFlowCreateDialog } from './ivr-flow-create-dialog';
import { IvrInboundDialog } from './ivr-inbound-dialog';
import { IvrNumberFormDialog } from './ivr-number-form-dialog';
import { IvrTrunkFormDialog } from './ivr-trunk-form-dialog';
import { IvrTrunkTestCallDialog } from './ivr-trunk-test-call-dialog';

/** The one dialog the section may show at a time, with the number or trunk it works on. */
export type IvrDialog =
  | { type: 'create-flow' }
  | { type: 'add-number' }
  | { type: 'edit-number'; number: ProjectNumber }
  | { type: 'inbound'; number: ProjectNumber }
  | { type: 'simulate-inbound'; number: ProjectNumber }
  | { type: 'add-trunk' }
  | { type: 'edit-trunk'; trunk: Trunk }
  | { type: 'test-trunk'; trunk: Trunk };

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
      {dialog?.type === 'create-flow' && (
        <IvrFlowCreateDialog projectId={projectId} onClose={context.close} />
      )}
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
              assistantName: dialog.number.inboundFlowName
                ? `流程：${dialog.number.inboundFlowName}`
                : dialog.number.inboundAssistantName,
            },
          ]}
          onClose={context.close}
        />
      )}
      {(dialog?.type === 'add-trunk' || dialog?.type === 'edit-trunk') && (
        <IvrTrunkFormDialog
          projectId={projectId}
          trunk={dialog.type === 'edit-trunk' ? dialog.trunk : undefined}
          onClose={context.close}
        />
      )}
      {dialog?.type === 'test-trunk' && (
        <IvrTrunkTestCallDialog projectId={projectId} trunk={dialog.trunk} onClose={context.close} />
      )}
    </DialogsContext.Provider>
  );
}
