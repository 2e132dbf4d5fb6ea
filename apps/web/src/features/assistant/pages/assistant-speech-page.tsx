import { Tabs } from 'antd';
import { Link, useSearchParams } from 'react-router';
import { SpeechRecognitionTab } from '../components/assistant-speech-recognition-tab';
import { SpeechSynthesisTab } from '../components/assistant-speech-synthesis-tab';
import { VoiceCloneTab } from '../components/voice-clone-tab';

const TABS = ['recognition', 'synthesis', 'clone'] as const;
type SpeechTab = (typeof TABS)[number];

/** 语音配置: how the project's assistants hear and speak, next to 模型配置. */
export function AssistantSpeechPage() {
  const [params, setParams] = useSearchParams();
  const requested = params.get('tab');
  const active: SpeechTab = TABS.includes(requested as SpeechTab) ? (requested as SpeechTab) : 'recognition';

  return (
    <main className="flex flex-col gap-4 p-6">
      <header className="flex flex-wrap items-center justify-between gap-3">
        <h1 className="text-2xl font-semibold text-gray-900">语音配置</h1>
        <Link to="/assistant/list">返回小助手列表</Link>
      </header>
      <Tabs
        activeKey={active}
        // The tab is in the address, so a link (from the editor's 音色) opens the right one.
        onChange={(key) => setParams({ tab: key }, { replace: true })}
        items={[
          { key: 'recognition', label: '语音识别', children: <SpeechRecognitionTab /> },
          { key: 'synthesis', label: '语音合成', children: <SpeechSynthesisTab /> },
          { key: 'clone', label: '声音复刻', children: <VoiceCloneTab /> },
        ]}
      />
    </main>
  );
}
