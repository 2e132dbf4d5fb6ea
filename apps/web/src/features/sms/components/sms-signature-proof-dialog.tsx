import type { SmsSignature } from '@callpilot/contracts';
import { Alert, Button, Modal, Upload } from 'antd';
import { useState } from 'react';
import { toast } from 'sonner';
import { useUploadSmsSignatureProof } from '../api/upload-sms-signature-proof';
import { bracketed } from '../utils/sms-format';

/** The server's own limit; checking it here saves uploading a file that will be refused. */
const MAX_PROOF_BYTES = 5 * 1024 * 1024;
const PROOF_TYPES = /\.(png|jpe?g|pdf)$/i;

export function SmsSignatureProofDialog({
  projectId,
  signature,
  onClose,
}: {
  projectId: string;
  signature: SmsSignature;
  onClose: () => void;
}) {
  const [file, setFile] = useState<File | null>(null);
  const [invalid, setInvalid] = useState<string | null>(null);
  const upload = useUploadSmsSignatureProof(projectId);

  const pick = (picked: File) => {
    if (!PROOF_TYPES.test(picked.name)) setInvalid('只支持 PNG、JPG 或 PDF 文件');
    else if (picked.size > MAX_PROOF_BYTES) setInvalid('文件不能超过 5 MB');
    else setInvalid(null);
    setFile(picked);
    upload.reset();
    // Kept here and sent on 上传, not by antd's own request.
    return false;
  };

  const send = () => {
    if (!file || invalid) return;
    upload.mutate(
      { id: signature.id, file },
      {
        onSuccess: () => {
          toast.success('资质证明已上传，现在可以提交审核');
          onClose();
        },
      },
    );
  };

  const error = invalid ?? upload.error?.message;
  return (
    <Modal
      open
      title={`上传资质证明：${bracketed(signature.name)}`}
      okText="上传"
      okButtonProps={{ disabled: !file || Boolean(invalid) }}
      onOk={send}
      onCancel={onClose}
      confirmLoading={upload.isPending}
      destroyOnHidden
      mask={{ closable: false }}
    >
      <div className="flex flex-col gap-4 text-sm">
        <p className="text-gray-600">
          上传能证明签名归属的材料，如营业执照、App 的著作权登记或应用商店截图、网站备案截图、商标注册证。
          支持 PNG、JPG、PDF，不超过 5 MB。
        </p>
        {signature.proofName && (
          <p>
            当前证明：<span className="font-medium">{signature.proofName}</span>（重新上传将替换）
          </p>
        )}
        <Upload accept=".png,.jpg,.jpeg,.pdf" maxCount={1} showUploadList={false} beforeUpload={pick}>
          <Button>选择文件</Button>
        </Upload>
        {file && (
          <p>
            已选择：<span className="font-medium">{file.name}</span>
          </p>
        )}
        {error && <Alert type="error" showIcon title={error} />}
      </div>
    </Modal>
  );
}
