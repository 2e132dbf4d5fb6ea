import { Empty } from 'antd';

/** 声音复刻: not built yet; the voice-cloning work replaces this tab. */
export function VoiceCloneTab() {
  return (
    <section className="rounded-lg border border-gray-200 bg-white p-8">
      <Empty description="声音复刻即将上线">
        <p className="text-sm text-gray-500">上线后可上传或录制一段声音样本，复刻出专属音色供小助手使用。</p>
      </Empty>
    </section>
  );
}
