import type { SynthesisProvider, SynthesisProviderTestResult } from '@callpilot/contracts';
import { Form, InputNumber } from 'antd';
import { type VoiceChoice, VoicePicker } from '@/components/voice-picker';
import { selectCurrentProjectId, useUserStore } from '@/stores/user-store';
import { useVoices } from '../api/get-voices';
import { ProviderProfilePanel } from './assistant-provider-profiles';
import { SpeechSettingsSection } from './assistant-speech-settings';
import { useSynthesisProfileList } from './assistant-synthesis-provider-form';

/** 语音配置 › 语音合成: the synthesis profiles with a spoken test, the fallback voice and its timeout. */
export function SpeechSynthesisTab() {
  const projectId = useUserStore(selectCurrentProjectId);
  const list = useSynthesisProfileList();
  const voices = useVoices(projectId);

  return (
    <div className="flex flex-col gap-4">
      <ProviderProfilePanel<SynthesisProvider, SynthesisProviderTestResult> {...list} />
      <SpeechSettingsSection
        name="synthesis-settings"
        title="备用音色"
        description="小助手的音色合成出错或首包超过合成超时，本句改用备用音色播放，通话记录会注明。离线音色不依赖网络，最为可靠。"
      >
        <div className="grid grid-cols-1 gap-x-4 md:grid-cols-2">
          <Form.Item label="备用音色" name="synthesisFallback">
            <FallbackVoice voices={voices.data} loading={voices.isPending} />
          </Form.Item>
          <Form.Item
            label="合成超时（毫秒）"
            name="synthesisTimeoutMs"
            extra="300-10000，首包超过即改用备用音色"
          >
            <InputNumber min={300} max={10_000} step={100} className="w-full" />
          </Form.Item>
        </div>
      </SpeechSettingsSection>
    </div>
  );
}

/** The picker as a form control (Form.Item passes id, value, onChange and disabled). */
function FallbackVoice({
  id,
  value,
  onChange,
  disabled,
  voices,
  loading,
}: {
  id?: string;
  value?: VoiceChoice;
  onChange?: (voice: VoiceChoice) => void;
  disabled?: boolean;
  voices: Parameters<typeof VoicePicker>[0]['voices'];
  loading: boolean;
}) {
  return (
    <VoicePicker
      id={id}
      voices={voices}
      loading={loading}
      value={value}
      disabled={disabled}
      onChange={(voice) => onChange?.(voice)}
    />
  );
}
