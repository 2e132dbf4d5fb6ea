import {
  analyzeVoiceSample,
  SYNTHESIS_VENDOR_LABELS,
  VOICE_SAMPLE_RULES,
  type VoiceSampleAnalysis,
  voiceCloneCreateFields,
} from '@callpilot/contracts';
import { Alert, Button, Form, Input, Modal, Progress, Select, Space, Typography, Upload } from 'antd';
import { useEffect, useState } from 'react';
import { toast } from 'sonner';
import { zodRule } from '@/lib/form-rules';
import { RequestError } from '@/lib/request';
import { useCreateVoiceClone } from '../api/create-voice-clone';
import type { CloneProfile } from '../api/get-clone-profiles';
import { useVoiceRecorder } from '../hooks/use-voice-recorder';
import { decodeVoiceSample, encodeWav, SampleDecodeError } from '../utils/voice-sample-audio';

/** About 15 seconds read at an everyday pace, in the register of a service call. */
const READING_TEXT =
  '您好，欢迎致电我们的客服中心，我是您的专属顾问。今天给您来电，是想了解一下您最近的使用情况。如果您有任何问题或者建议，都可以随时告诉我，我会尽快为您处理，祝您生活愉快。';

interface PreparedSample {
  wav: Blob;
  url: string;
  analysis: VoiceSampleAnalysis;
  source: string;
}

interface FormValues {
  name: string;
  providerId: string;
  speakerId?: string;
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} 秒`;

const SPEAKER_ID_REQUIRED = '请填写火山引擎控制台中购买的音色 ID（S_ 开头）';

/** 新建复刻: the form, the sample (uploaded or recorded) checked in the browser, and the upload. */
export function VoiceCloneCreateDialog({
  projectId,
  profiles,
  open,
  onClose,
}: {
  projectId: string;
  profiles: CloneProfile[];
  open: boolean;
  onClose: () => void;
}) {
  const [form] = Form.useForm<FormValues>();
  const providerId = Form.useWatch('providerId', form);
  const profile = profiles.find((p) => p.id === providerId);
  const [sample, setSample] = useState<PreparedSample | null>(null);
  const [sampleError, setSampleError] = useState<string | null>(null);
  const [decoding, setDecoding] = useState(false);
  const [progress, setProgress] = useState<number | null>(null);
  const [serverError, setServerError] = useState<string | null>(null);
  const create = useCreateVoiceClone(projectId);

  useEffect(
    () => () => {
      if (sample) URL.revokeObjectURL(sample.url);
    },
    [sample],
  );

  async function prepare(blob: Blob, source: string) {
    setSampleError(null);
    setServerError(null);
    setDecoding(true);
    try {
      const decoded = await decodeVoiceSample(blob);
      const wav = encodeWav(decoded);
      setSample({
        wav,
        url: URL.createObjectURL(wav),
        analysis: analyzeVoiceSample(decoded.samples, decoded.sampleRate),
        source,
      });
    } catch (err) {
      setSample(null);
      setSampleError(
        err instanceof SampleDecodeError ? err.message : '无法读取这段录音，请重新录制或上传 WAV 文件',
      );
    } finally {
      setDecoding(false);
    }
  }

  const recorder = useVoiceRecorder((recording) => void prepare(recording, '浏览器录音'));
  const passed = sample !== null && sample.analysis.problems.length === 0;
  const uploading = create.isPending;

  async function submit() {
    let values: FormValues;
    try {
      values = await form.validateFields();
    } catch {
      // antd shows each field's message under it.
      return;
    }
    // The field appears only once a Volcengine profile is chosen; a submit racing its registration
    // (or the watched value's next render) must still not send a clone without the slot it trains,
    // so the choice is read from the form itself, not from this render.
    const chosen = profiles.find((p) => p.id === form.getFieldValue('providerId'));
    const speakerId = (form.getFieldValue('speakerId') as string | undefined)?.trim();
    if (chosen?.vendor === 'volcengine' && !speakerId) {
      form.setFields([{ name: 'speakerId', errors: [SPEAKER_ID_REQUIRED] }]);
      return;
    }
    if (!sample || !passed) return;
    setServerError(null);
    setProgress(0);
    create.mutate(
      {
        name: values.name,
        providerId: values.providerId,
        speakerId: chosen?.vendor === 'volcengine' ? speakerId : undefined,
        sample: sample.wav,
        onProgress: setProgress,
      },
      {
        onSuccess: () => {
          toast.success('已提交复刻，复刻完成后即可在小助手中选用');
          onClose();
        },
        onError: (err) => {
          setServerError(err instanceof RequestError ? err.message : '复刻失败，请稍后重试');
        },
        onSettled: () => setProgress(null),
      },
    );
  }

  const recording = recorder.state === 'recording';
  return (
    <Modal
      title="新建复刻"
      open={open}
      onCancel={uploading ? undefined : onClose}
      mask={{ closable: false }}
      destroyOnHidden
      width={620}
      footer={[
        <Button key="cancel" onClick={onClose} disabled={uploading}>
          取消
        </Button>,
        <Button
          key="submit"
          type="primary"
          onClick={submit}
          disabled={!passed || recording}
          loading={uploading}
        >
          上传并复刻
        </Button>,
      ]}
    >
      <Form form={form} layout="vertical" requiredMark={false} disabled={uploading}>
        <Form.Item name="name" label="音色名称" rules={[zodRule(voiceCloneCreateFields.shape.name)]}>
          <Input placeholder="如：客服小李" maxLength={30} />
        </Form.Item>
        <Form.Item
          name="providerId"
          label="语音合成配置"
          rules={[{ required: true, message: '请选择语音合成配置' }]}
          extra={
            profiles.length === 0
              ? '还没有可以复刻声音的配置：请先在「语音合成」中添加阿里云百炼 CosyVoice 或火山引擎的配置'
              : '复刻出的音色由这个配置朗读'
          }
        >
          <Select
            placeholder="选择阿里云百炼 CosyVoice 或火山引擎的配置"
            options={profiles.map((p) => ({
              value: p.id,
              label: `${p.name}（${SYNTHESIS_VENDOR_LABELS[p.vendor]}）`,
            }))}
          />
        </Form.Item>
        {profile?.vendor === 'volcengine' && (
          <Form.Item
            name="speakerId"
            label="音色 ID"
            rules={[
              { required: true, message: SPEAKER_ID_REQUIRED },
              zodRule(voiceCloneCreateFields.shape.speakerId),
            ]}
            extra="在火山引擎控制台「声音复刻」中购买的音色 ID，S_ 开头；每个音色 ID 可训练的次数有限"
          >
            <Input placeholder="S_" />
          </Form.Item>
        )}
      </Form>

      <Typography.Paragraph type="secondary">
        请在安静的环境中，用平常说话的语气连续朗读 {VOICE_SAMPLE_RULES.minSeconds}～
        {VOICE_SAMPLE_RULES.maxSeconds} 秒（只能有一个人的声音）。可以朗读：
      </Typography.Paragraph>
      <Typography.Paragraph className="rounded bg-gray-50 p-3">{READING_TEXT}</Typography.Paragraph>

      <Space wrap>
        {recording ? (
          <Button danger onClick={recorder.stop}>
            停止录音（{seconds(recorder.elapsedMs)}）
          </Button>
        ) : (
          <Button onClick={() => void recorder.start()} disabled={uploading || decoding}>
            开始录音
          </Button>
        )}
        <Upload
          accept=".wav,audio/wav,audio/x-wav"
          showUploadList={false}
          disabled={uploading || recording || decoding}
          beforeUpload={(file) => {
            void prepare(file, file.name);
            return false;
          }}
        >
          <Button disabled={uploading || recording || decoding}>上传 WAV 文件</Button>
        </Upload>
      </Space>

      <div className="mt-4 space-y-3">
        {recorder.error && <Alert type="error" showIcon title={recorder.error} />}
        {sampleError && <Alert type="error" showIcon title={sampleError} />}
        {decoding && <Typography.Text type="secondary">正在检查录音…</Typography.Text>}
        {sample && (
          <>
            {/* biome-ignore lint/a11y/useMediaCaption: a voice sample to listen back to has no captions. */}
            <audio controls src={sample.url} aria-label="录音回放" className="w-full" />
            {passed ? (
              <Alert
                type="success"
                showIcon
                title={`录音检查通过：${sample.source}，时长 ${seconds(sample.analysis.durationMs)}`}
              />
            ) : (
              <Alert
                type="error"
                showIcon
                title="录音未通过检查，请按提示重新录制或上传"
                description={
                  <ul className="list-disc pl-5" aria-label="录音问题">
                    {sample.analysis.problems.map((problem) => (
                      <li key={problem.code}>{problem.message}</li>
                    ))}
                  </ul>
                }
              />
            )}
          </>
        )}
        {progress !== null && (
          <div>
            <Progress percent={progress} size="small" aria-label="上传进度" />
            <Typography.Text type="secondary">
              {progress < 99 ? '正在上传录音…' : '已上传，正在提交给服务商复刻…'}
            </Typography.Text>
          </div>
        )}
        {serverError && <Alert type="error" showIcon title={serverError} />}
      </div>
    </Modal>
  );
}
