import type { SmsSignature } from '@callpilot/contracts';
import { SmsSignatureFormDialog } from './sms-signature-form-dialog';
import { SmsSignatureProofDialog } from './sms-signature-proof-dialog';

/** The one dialog the signature page may show at a time, with what it works on. */
export type SmsSignatureDialog =
  | { type: 'create' }
  | { type: 'edit'; signature: SmsSignature }
  | { type: 'proof'; signature: SmsSignature };

export function SmsSignatureDialogs({
  projectId,
  dialog,
  onClose,
}: {
  projectId: string;
  dialog: SmsSignatureDialog | null;
  onClose: () => void;
}) {
  if (dialog?.type === 'create') return <SmsSignatureFormDialog projectId={projectId} onClose={onClose} />;
  if (dialog?.type === 'edit')
    return <SmsSignatureFormDialog projectId={projectId} signature={dialog.signature} onClose={onClose} />;
  if (dialog?.type === 'proof')
    return <SmsSignatureProofDialog projectId={projectId} signature={dialog.signature} onClose={onClose} />;
  return null;
}
