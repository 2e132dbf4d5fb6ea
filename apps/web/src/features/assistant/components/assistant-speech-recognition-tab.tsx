import type { SpeechProvider, SpeechProviderTestResult } from '@callpilot/contracts';
import { Button, Form, InputNumber, Select, Upload } from 'antd';
import { selectCurrentProjectId, useUserStore } from '@/stores/user-store';
import { testSpeechProvider } from '../api/test-speech-provider';
import { ProviderProfilePanel } from './assistant-provider-profiles';
import { useSpeechProfileList } from './assistant-speech-provider-drawer';
import { SpeechSettingsSection } from './assistant-speech-settings';

/** 语音配置 › 语音识别: the recognition profiles, a test with the built-in sample or a recording, and 主备. */
export function SpeechRecognitionTab() {
  const projectId = useUserStore(selectCurrentProjectId) ?? '';
  const list = useSpeechProfileList(true);
  const options = (none: string) => [
    { value: '', label: none },
    ...(list.profiles.data ?? []).map((profile) => ({ value: profile.id, label: profile.name })),
  ];

  return (
    <div className="flex flex-col gap-4">
      <ProviderProfilePanel<SpeechProvider, SpeechProviderTestResult>
        {...list}
        extraActions={(profile, run) => (
          <Upload
            accept=".wav,audio/wav,audio/x-wav"
            showUploadList={false}
            // The file goes to the test, not to an upload endpoint of its own.
            beforeUpload={(file) => {
              run(() => testSpeechProvider(projectId, profile.id, file));
              return false;
            }}
          >
            <Button type="link" size="small">
              上传录音识别
            </Button>
          </Upload>
        )}
      />
      <SpeechSettingsSection
        name="recognition-settings"
        title="主备识别"
        description="未单独选择语音识别配置的小助手使用主识别配置；主识别出错或超过识别超时，本轮改用备用识别配置，通话记录会注明。"
      >
        <div className="grid grid-cols-1 gap-x-4 md:grid-cols-3">
          <Form.Item
            label="主识别配置"
            name="recognitionPrimaryId"
            getValueProps={(value: string | null) => ({ value: value ?? '' })}
            normalize={(value: string) => value || null}
          >
            <Select loading={list.profiles.isPending} options={options('不使用（仅识别按键）')} />
          </Form.Item>
          <Form.Item
            label="备用识别配置"
            name="recognitionFallbackId"
            dependencies={['recognitionPrimaryId']}
            getValueProps={(value: string | null) => ({ value: value ?? '' })}
            normalize={(value: string) => value || null}
            rules={[
              ({ getFieldValue }) => ({
                validator: async (_, value: string | null) => {
                  if (!value) return;
                  const primary = getFieldValue('recognitionPrimaryId');
                  if (!primary) throw new Error('请先选择主识别配置，备用识别配置在主识别失败时接替');
                  if (primary === value) throw new Error('备用识别配置不能与主识别配置相同');
                },
              }),
            ]}
          >
            <Select loading={list.profiles.isPending} options={options('不使用')} />
          </Form.Item>
          <Form.Item
            label="识别超时（毫秒）"
            name="recognitionTimeoutMs"
            extra="300-10000，超过即改用备用识别"
          >
            <InputNumber min={300} max={10_000} step={100} className="w-full" />
          </Form.Item>
        </div>
      </SpeechSettingsSection>
    </div>
  );
}
