import {
  SPEECH_VENDOR_LABELS,
  type SpeechProviderWriteRequest,
  type SpeechVendor,
  speechProviderWriteRequest,
} from '@callpilot/contracts';
import { Form, Select } from 'antd';
import { selectCurrentProjectId, useUserStore } from '@/stores/user-store';
import { useDeleteSpeechProvider } from '../api/delete-speech-provider';
import { useSpeechProviders } from '../api/get-speech-providers';
import { useSaveSpeechProvider } from '../api/save-speech-provider';
import { useTestSpeechProvider } from '../api/test-speech-provider';
import {
  ProviderEndpointFields,
  ProviderProfileDrawer,
  ProviderProfileForm,
} from './assistant-provider-profiles';

const vendorOptions = (Object.keys(SPEECH_VENDOR_LABELS) as SpeechVendor[]).map((value) => ({
  value,
  label: SPEECH_VENDOR_LABELS[value],
}));

/** The project's speech-recognition profiles: what an assistant on a real line listens with. */
export function AssistantSpeechProviderDrawer({ open, onClose }: { open: boolean; onClose: () => void }) {
  const projectId = useUserStore(selectCurrentProjectId);
  const profiles = useSpeechProviders(open ? projectId : undefined);
  const save = useSaveSpeechProvider(projectId ?? '');
  const test = useTestSpeechProvider(projectId ?? '');
  const remove = useDeleteSpeechProvider(projectId ?? '');

  return (
    <ProviderProfileDrawer
      title="语音识别配置"
      intro="配置语音识别接口，小助手在真实线路通话中用它听懂客户说话。未选择语音识别配置的小助手只能识别按键；模拟通话不需要语音识别。"
      emptyText="暂无语音识别配置"
      addLabel="添加语音识别配置"
      testLabel="测试识别"
      deleteWarning="正被小助手使用的配置不能删除。"
      open={open}
      onClose={onClose}
      profiles={profiles}
      test={test}
      remove={remove}
      resultText={(result) =>
        result.ok ? `${result.message}（耗时 ${result.latencyMs} ms）` : `识别失败：${result.message}`
      }
      renderForm={(editing, onDone) => (
        <ProviderProfileForm<SpeechProviderWriteRequest>
          name="speech-provider"
          addTitle="添加语音识别配置"
          editing={editing}
          initialValues={{
            name: editing === 'new' ? '' : editing.name,
            vendor: editing === 'new' ? 'openai_compatible' : editing.vendor,
            baseUrl: editing === 'new' ? '' : editing.baseUrl,
            model: editing === 'new' ? '' : editing.model,
          }}
          save={save}
          onDone={onDone}
        >
          <Form.Item label="接口类型" name="vendor">
            <Select options={vendorOptions} />
          </Form.Item>
          <ProviderEndpointFields
            schema={speechProviderWriteRequest.shape}
            namePlaceholder="如：Whisper"
            baseUrlHint="OpenAI 兼容的语音转写接口（/audio/transcriptions），如 https://api.openai.com/v1"
            modelLabel="识别模型"
            modelPlaceholder="如：whisper-1"
          />
        </ProviderProfileForm>
      )}
    />
  );
}
