import { Alert, Button, Skeleton } from 'antd';
import { selectCurrentProjectId, useUserStore } from '@/stores/user-store';
import { useSmsSettings } from '../api/get-sms-settings';
import { SmsSettingsForm } from '../components/sms-settings-form';

/** 设置: the project's SMS provider, its keys and the daily cap per number. */
export function SmsSettingsPage() {
  const projectId = useUserStore(selectCurrentProjectId) ?? '';
  const canManage = useUserStore((state) => state.userInfo.isOwnerOrAdmin);
  const settings = useSmsSettings(projectId);
  return (
    <>
      <header>
        <h2 className="text-lg font-semibold text-gray-900">服务商设置</h2>
        <p className="mt-1 max-w-3xl text-sm text-gray-500">
          选择发送短信的服务商（阿里云或腾讯云）并填写其密钥；签名和模板须在该服务商审核通过后才能发送。
        </p>
      </header>
      <section className="rounded-lg border border-gray-200 bg-white p-6">
        {settings.isError ? (
          <Alert
            type="error"
            showIcon
            title="设置加载失败"
            action={
              <Button size="small" onClick={() => void settings.refetch()}>
                重试
              </Button>
            }
          />
        ) : settings.data ? (
          <SmsSettingsForm projectId={projectId} settings={settings.data} canManage={canManage} />
        ) : (
          <Skeleton active />
        )}
      </section>
    </>
  );
}
