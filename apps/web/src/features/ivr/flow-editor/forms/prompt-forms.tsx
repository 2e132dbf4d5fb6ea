import { DeleteOutlined, PlusOutlined, UploadOutlined } from '@ant-design/icons';
import { Button, Input, Radio, Select, Upload } from 'antd';
import { toast } from 'sonner';
import { useFlowAudio } from '@/features/ivr/api/get-flow-audio';
import { useUploadFlowAudio } from '@/features/ivr/api/upload-flow-audio';
import { selectCurrentProjectId, useUserStore } from '@/stores/user-store';
import { TemplateInput } from '../template-input';
import { Field, type NodeFormProps, NumberField, SwitchField, TemplateField, TextField } from './fields';

const formatDuration = (ms: number) => `${Math.round(ms / 100) / 10} 秒`;

export function PlayForm({ node, errors, set }: NodeFormProps<'play'>) {
  const projectId = useUserStore(selectCurrentProjectId) ?? '';
  const audio = useFlowAudio(projectId);
  const upload = useUploadFlowAudio(projectId);
  return (
    <>
      <TemplateField
        label="放音内容"
        value={node.data.text}
        onChange={(text) => set({ text }, 'text')}
        error={errors.text}
        maxLength={1000}
        placeholder="例如：您好，欢迎致电星河宽带，{{caller}}"
        extra={node.data.audioId ? '已选择录音，播放录音而不是这段文字' : '用流程设置中的音色朗读'}
      />
      <Field label="录音（可选）" error={errors.audioId}>
        {(id) => (
          <div className="flex gap-2">
            <Select
              id={id}
              className="min-w-0 flex-1"
              allowClear
              placeholder="不使用录音"
              loading={audio.isPending}
              value={node.data.audioId ?? undefined}
              onChange={(audioId?: string) => set({ audioId: audioId ?? null })}
              options={(audio.data ?? []).map((file) => ({
                value: file.id,
                label: `${file.name}（${formatDuration(file.durationMs)}）`,
              }))}
            />
            <Upload
              accept=".wav,audio/wav"
              showUploadList={false}
              beforeUpload={(file) => {
                upload.mutate(file, {
                  onSuccess: (saved) => {
                    set({ audioId: saved.id });
                    toast.success(`已上传「${saved.name}」`);
                  },
                });
                // The mutation uploads it; antd's own request must not.
                return false;
              }}
            >
              <Button icon={<UploadOutlined />} loading={upload.isPending}>
                上传
              </Button>
            </Upload>
          </div>
        )}
      </Field>
      <SwitchField
        label="允许打断"
        checked={node.data.interruptible}
        onChange={(interruptible) => set({ interruptible })}
        extra="来电者按键或说话时停止放音"
      />
    </>
  );
}

export function VoicemailForm({ node, errors, set }: NodeFormProps<'voicemail'>) {
  return (
    <>
      <TemplateField
        label="留言提示音"
        value={node.data.prompt}
        onChange={(prompt) => set({ prompt }, 'prompt')}
        error={errors.prompt}
        maxLength={1000}
      />
      <NumberField
        label="留言最长时长"
        value={node.data.maxSeconds}
        onChange={(maxSeconds) => set({ maxSeconds }, 'maxSeconds')}
        error={errors.maxSeconds}
        min={5}
        max={300}
        unit="秒"
        extra="录音附在通话记录中；来电者按 # 或挂机结束留言"
      />
    </>
  );
}

export function HangupForm({ node, errors, set }: NodeFormProps<'hangup'>) {
  return (
    <>
      <TemplateField
        label="挂机前放音"
        value={node.data.text}
        onChange={(text) => set({ text }, 'text')}
        error={errors.text}
        maxLength={1000}
        placeholder="例如：感谢您的来电，再见。"
      />
      <TextField
        label="结束原因"
        value={node.data.reason}
        onChange={(reason) => set({ reason }, 'reason')}
        error={errors.reason}
        maxLength={40}
        placeholder="例如：非工作时间"
        extra="显示在通话记录的流程路径中"
      />
    </>
  );
}

export function SmsForm({ node, errors, set }: NodeFormProps<'sms'>) {
  return (
    <>
      <TemplateField
        label="接收号码"
        value={node.data.to}
        onChange={(to) => set({ to }, 'to')}
        error={errors.to}
        maxLength={200}
        multiline={false}
        extra="默认发给来电者 {{caller}}"
      />
      <TemplateField
        label="短信内容"
        value={node.data.content}
        onChange={(content) => set({ content }, 'content')}
        error={errors.content}
        maxLength={500}
        extra="自由文本，记入短信发送记录；运营商只接收已审核的模板，故仅开发发件箱会发出"
      />
    </>
  );
}

export function TransferForm({ node, errors, set }: NodeFormProps<'transfer'>) {
  return (
    <>
      <TemplateField
        label="转接号码或 SIP 地址"
        value={node.data.target}
        onChange={(target) => set({ target }, 'target')}
        error={errors.target}
        maxLength={200}
        multiline={false}
        placeholder="例如：02188886666 或 sip:agent@pbx.example.com"
      />
      <Field label="外显号码" error={errors.callerId}>
        {(id) => (
          <Radio.Group
            id={id}
            value={node.data.callerId}
            onChange={(event) => set({ callerId: event.target.value })}
            options={[
              { value: 'caller', label: '来电号码' },
              { value: 'callee', label: '被叫号码' },
              { value: 'custom', label: '指定号码' },
            ]}
          />
        )}
      </Field>
      {node.data.callerId === 'custom' && (
        <TemplateField
          label="指定外显号码"
          value={node.data.callerIdNumber}
          onChange={(callerIdNumber) => set({ callerIdNumber }, 'callerIdNumber')}
          error={errors.callerIdNumber}
          maxLength={20}
          multiline={false}
        />
      )}
      <NumberField
        label="振铃超时"
        value={node.data.ringTimeoutSec}
        onChange={(ringTimeoutSec) => set({ ringTimeoutSec }, 'ringTimeoutSec')}
        error={errors.ringTimeoutSec}
        min={5}
        max={120}
        unit="秒"
        extra="超时无人接听走「无人接听」出口"
      />
      <TemplateField
        label="转接提示音"
        value={node.data.prompt}
        onChange={(prompt) => set({ prompt }, 'prompt')}
        error={errors.prompt}
        maxLength={1000}
      />
    </>
  );
}

export function SetForm({ node, errors, set }: NodeFormProps<'set'>) {
  const rows = node.data.assignments;
  const change = (index: number, patch: Partial<(typeof rows)[number]>, typingKey?: string) =>
    set({ assignments: rows.map((row, i) => (i === index ? { ...row, ...patch } : row)) }, typingKey);
  return (
    <Field label="变量赋值" error={errors.assignments}>
      {() => (
        <div className="flex flex-col gap-2">
          {rows.map((row, index) => (
            // biome-ignore lint/suspicious/noArrayIndexKey: rows have no id; the index is their identity here
            <div key={index} className="rounded-md border border-gray-200 p-2">
              <div className="flex items-center gap-2">
                <Input
                  aria-label={`变量名 ${index + 1}`}
                  value={row.variable}
                  status={errors[`assignments.${index}.variable`] ? 'error' : undefined}
                  placeholder="变量名"
                  onChange={(event) =>
                    change(index, { variable: event.target.value }, `assignments.${index}.variable`)
                  }
                />
                <Button
                  type="text"
                  aria-label={`删除赋值 ${index + 1}`}
                  icon={<DeleteOutlined />}
                  onClick={() => set({ assignments: rows.filter((_, i) => i !== index) })}
                />
              </div>
              {errors[`assignments.${index}.variable`] && (
                <div className="mt-1 text-xs text-red-500">{errors[`assignments.${index}.variable`]}</div>
              )}
              <div className="mt-2">
                <TemplateInput
                  value={row.value}
                  placeholder="值，可引用 {{变量}}"
                  maxLength={500}
                  onChange={(value) => change(index, { value }, `assignments.${index}.value`)}
                />
              </div>
            </div>
          ))}
          <Button
            icon={<PlusOutlined />}
            onClick={() => set({ assignments: [...rows, { variable: `var${rows.length + 1}`, value: '' }] })}
          >
            添加赋值
          </Button>
        </div>
      )}
    </Field>
  );
}
