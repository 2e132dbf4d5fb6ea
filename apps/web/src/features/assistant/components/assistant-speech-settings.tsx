import type { SpeechSettings } from '@callpilot/contracts';
import { Button, Form, Skeleton } from 'antd';
import type { ReactNode } from 'react';
import { toast } from 'sonner';
import { selectCurrentProjectId, useUserStore } from '@/stores/user-store';
import { useSpeechSettings } from '../api/get-speech-settings';
import { useSaveSpeechSettings } from '../api/save-speech-settings';
import { useCanManageProfiles } from './assistant-provider-profiles';

/**
 * One tab's part of the project's speech settings (主备识别, 备用音色, 超时): a form over the
 * settings whose save sends the whole object with this part changed. Members read it only.
 */
export function SpeechSettingsSection({
  name,
  title,
  description,
  children,
}: {
  /** Prefixes the fields' ids: both tabs' sections may be mounted at once. */
  name: string;
  title: string;
  description: ReactNode;
  children: ReactNode;
}) {
  const projectId = useUserStore(selectCurrentProjectId);
  const settings = useSpeechSettings(projectId);
  const save = useSaveSpeechSettings(projectId ?? '');
  const canManage = useCanManageProfiles();
  const [form] = Form.useForm<SpeechSettings>();

  return (
    <section className="flex flex-col gap-3 rounded-lg border border-gray-200 bg-white p-4">
      <div>
        <h2 className="text-base font-semibold text-gray-900">{title}</h2>
        <p className="text-sm text-gray-500">{description}</p>
      </div>
      {!settings.data ? (
        <Skeleton active />
      ) : (
        <Form<SpeechSettings>
          form={form}
          name={name}
          layout="vertical"
          disabled={!canManage}
          initialValues={settings.data}
          onFinish={async (values) => {
            try {
              await save.mutateAsync({ ...settings.data, ...values });
              toast.success('语音配置已保存');
            } catch {
              // The request client has shown the server's message; the form keeps the edit.
            }
          }}
        >
          {children}
          {canManage && (
            <Button type="primary" htmlType="submit" loading={save.isPending}>
              保存
            </Button>
          )}
        </Form>
      )}
    </section>
  );
}
