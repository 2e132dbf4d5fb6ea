import type { KnowledgeBase, KnowledgeSegment } from '@callpilot/contracts';
import { createContext, type ReactNode, useContext, useMemo, useState } from 'react';
import { KnowledgeBaseFormDialog } from './knowledge-base-form-dialog';
import { KnowledgeSegmentFormDialog } from './knowledge-segment-form-dialog';

/** The one dialog the section may show at a time, with what it works on. */
export type KnowledgeDialog =
  | { type: 'create-base' }
  | { type: 'edit-base'; base: KnowledgeBase }
  | { type: 'edit-segment'; segment: KnowledgeSegment };

type KnowledgeDialogsContext = {
  open: (dialog: KnowledgeDialog) => void;
  close: () => void;
};

const DialogsContext = createContext<KnowledgeDialogsContext | null>(null);

export function useKnowledgeDialogs(): KnowledgeDialogsContext {
  const context = useContext(DialogsContext);
  if (!context) throw new Error('useKnowledgeDialogs needs <KnowledgeDialogsProvider>');
  return context;
}

/** Holds the section's open dialog and renders it, so pages only say which one to open. */
export function KnowledgeDialogsProvider({
  projectId,
  children,
}: {
  projectId: string;
  children: ReactNode;
}) {
  const [dialog, setDialog] = useState<KnowledgeDialog | null>(null);
  const context = useMemo(() => ({ open: setDialog, close: () => setDialog(null) }), []);
  return (
    <DialogsContext.Provider value={context}>
      {children}
      {(dialog?.type === 'create-base' || dialog?.type === 'edit-base') && (
        <KnowledgeBaseFormDialog
          projectId={projectId}
          base={dialog.type === 'edit-base' ? dialog.base : undefined}
          onClose={context.close}
        />
      )}
      {dialog?.type === 'edit-segment' && (
        <KnowledgeSegmentFormDialog projectId={projectId} segment={dialog.segment} onClose={context.close} />
      )}
    </DialogsContext.Provider>
  );
}
