import type { ApiKeyCreated } from '@callpilot/contracts';
import { Alert, Button, Modal } from 'antd';
import { useState } from 'react';
import { DeveloperCopyButton } from './developer-copy-button';

export const SECRET_ONCE_WARNING = '密钥只显示这一次，关闭后无法再次查看，请立即保存';

/**
 * The whole key, shown once after it is created or rolled. Only 我已保存 closes it straight away;
 * the mask, Esc and × ask first, because the secret cannot be shown again.
 */
export function ApiKeySecretDialog({
  created,
  reason,
  onClose,
}: {
  created: ApiKeyCreated;
  reason: 'create' | 'roll';
  onClose: () => void;
}) {
  const [confirming, setConfirming] = useState(false);
  return (
    <>
      <Modal
        open
        title={
          reason === 'create' ? `密钥「${created.key.name}」已创建` : `密钥「${created.key.name}」已轮换`
        }
        onCancel={() => setConfirming(true)}
        width={600}
        footer={
          <Button type="primary" onClick={onClose}>
            我已保存
          </Button>
        }
      >
        <div className="flex flex-col gap-4">
          <Alert type="warning" showIcon title={SECRET_ONCE_WARNING} />
          <div className="flex items-center gap-2 rounded-md border border-gray-200 bg-gray-50 p-3">
            <code className="min-w-0 flex-1 break-all font-mono text-sm text-gray-900">{created.secret}</code>
            <DeveloperCopyButton text={created.secret} type="primary" ariaLabel="复制密钥" />
          </div>
          <p className="m-0 text-sm text-gray-500">
            调用开放接口时放在请求头 <code className="font-mono">Authorization: Bearer {'<密钥>'}</code>{' '}
            中。请保存在服务器的环境变量或密钥管理服务里，不要写进前端代码或提交到代码仓库。
            {reason === 'roll' && ' 旧密钥在宽限期结束后失效，请在此之前把新密钥部署到所有调用方。'}
          </p>
        </div>
      </Modal>
      <Modal
        open={confirming}
        title="关闭前确认"
        okText="仍要关闭"
        cancelText="返回"
        okButtonProps={{ danger: true }}
        onOk={onClose}
        onCancel={() => setConfirming(false)}
      >
        关闭后无法再次查看该密钥。确定已经复制并保存了吗？
      </Modal>
    </>
  );
}
