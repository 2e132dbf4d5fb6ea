import { InboxOutlined } from '@ant-design/icons';
import {
  SMS_BATCH_REJECT_LABELS,
  type SmsBatch,
  type SmsBatchMapping,
  type SmsBatchPreview,
  type SmsBatchRejectKind,
} from '@callpilot/contracts';
import { Alert, Button, Descriptions, Progress, Select, Upload } from 'antd';
import { useState } from 'react';
import { Link } from 'react-router';
import { useCommitSmsBatch } from '../api/commit-sms-batch';
import { downloadSmsBatchRejects, downloadSmsBatchTemplate } from '../api/download-sms-batch-file';
import { useSmsSignatures } from '../api/get-sms-signatures';
import { useSmsTemplates } from '../api/get-sms-templates';
import { previewSmsBatch } from '../api/preview-sms-batch';
import { uploadSmsBatch } from '../api/upload-sms-batch';
import { formatSmsTime } from '../utils/sms-format';
import { batchRecordsHref } from './sms-record-links';
import { APPROVED } from './sms-single-send';

const ACCEPTED_EXTENSIONS = ['.csv', '.xlsx'];
const REJECT_KINDS = Object.keys(SMS_BATCH_REJECT_LABELS) as SmsBatchRejectKind[];

type Phase =
  | { step: 'choose' }
  | { step: 'uploading'; percent: number }
  | { step: 'preview'; preview: SmsBatchPreview }
  | { step: 'done'; batch: SmsBatch };

/** The counts and the mapping of a staged upload; a mapping change recounts on the server. */
export function SmsBatchPreviewPanel({
  preview,
  busy,
  onMappingChange,
}: {
  preview: SmsBatchPreview;
  busy: boolean;
  onMappingChange: (mapping: SmsBatchMapping) => void;
}) {
  const columns = preview.headers.map((header) => ({ value: header, label: header }));
  const { mapping } = preview;
  return (
    <div className="flex flex-col gap-4">
      <div className="grid gap-3 sm:grid-cols-2">
        <div className="flex flex-col gap-1 text-sm text-gray-700">
          手机号列
          <Select
            aria-label="手机号列"
            value={mapping.phone}
            options={columns}
            disabled={busy}
            onChange={(phone) => onMappingChange({ ...mapping, phone })}
          />
        </div>
        {preview.variables.map((name) => (
          <div key={name} className="flex flex-col gap-1 text-sm text-gray-700">
            {`变量 \${${name}}`}
            <Select
              aria-label={`变量 ${name} 的列`}
              value={mapping.variables[name] ?? ''}
              options={[{ value: '', label: '（不填）' }, ...columns]}
              disabled={busy}
              onChange={(header) =>
                onMappingChange({ ...mapping, variables: { ...mapping.variables, [name]: header } })
              }
            />
          </div>
        ))}
      </div>
      <Descriptions
        size="small"
        bordered
        column={{ xs: 1, sm: 2, md: 3 }}
        items={[
          { key: 'rows', label: '总行数', children: preview.rows },
          { key: 'valid', label: '可发送', children: <strong>{preview.valid}</strong> },
          ...REJECT_KINDS.map((kind) => ({
            key: kind,
            label: SMS_BATCH_REJECT_LABELS[kind],
            children: preview.counts[kind] ?? 0,
          })),
          { key: 'parts', label: '预计计费条数', children: preview.estimatedParts },
        ]}
      />
      {preview.sendAfter && (
        <Alert
          type="warning"
          showIcon
          title={`推广短信仅在 8:00–20:00（北京时间）发送，确认后将于 ${formatSmsTime(preview.sendAfter)} 发出`}
        />
      )}
      <section aria-label="短信示例" className="flex flex-col gap-2">
        <h4 className="text-sm font-medium text-gray-700">前 {preview.texts.length} 条短信示例</h4>
        {preview.texts.length === 0 ? (
          <p className="text-sm text-gray-500">没有可发送的行，请检查列映射或文件内容</p>
        ) : (
          preview.texts.map((text) => (
            <p key={text.row} className="rounded bg-gray-50 p-2 text-sm text-gray-800">
              <span className="mr-2 text-gray-500">
                第 {text.row} 行 {text.phone}（{text.parts} 条）
              </span>
              {text.content}
            </p>
          ))
        )}
      </section>
    </div>
  );
}

/** 批量发送: pick a signature and a template, upload a list, check the preview, confirm. */
export function SmsBatchSend({ projectId }: { projectId: string }) {
  const signatures = useSmsSignatures(projectId, APPROVED);
  const templates = useSmsTemplates(projectId, APPROVED);
  const commit = useCommitSmsBatch(projectId);
  const [signatureId, setSignatureId] = useState<string>();
  const [templateId, setTemplateId] = useState<string>();
  const [phase, setPhase] = useState<Phase>({ step: 'choose' });
  const [error, setError] = useState<string | null>(null);
  const [recounting, setRecounting] = useState(false);

  const upload = (file: File) => {
    if (!signatureId || !templateId) return;
    setError(null);
    setPhase({ step: 'uploading', percent: 0 });
    uploadSmsBatch(projectId, { file, signatureId, templateId }, (percent) =>
      setPhase({ step: 'uploading', percent }),
    )
      .then((preview) => setPhase({ step: 'preview', preview }))
      .catch((err: Error) => {
        setError(err.message);
        setPhase({ step: 'choose' });
      });
  };

  const remap = (preview: SmsBatchPreview, mapping: SmsBatchMapping) => {
    setError(null);
    setRecounting(true);
    previewSmsBatch(projectId, preview.uploadId, mapping)
      .then((next) => setPhase({ step: 'preview', preview: next }))
      .catch((err: Error) => setError(err.message))
      .finally(() => setRecounting(false));
  };

  const confirm = (preview: SmsBatchPreview) => {
    setError(null);
    commit.mutate(
      { uploadId: preview.uploadId, mapping: preview.mapping },
      {
        onSuccess: (batch) => setPhase({ step: 'done', batch }),
        onError: (err) => setError(err.message),
      },
    );
  };

  const ready = Boolean(signatureId && templateId);
  return (
    <div className="flex flex-col gap-4">
      <div className="grid gap-3 sm:grid-cols-2">
        <div className="flex flex-col gap-1 text-sm text-gray-700">
          签名
          <Select
            aria-label="批量发送签名"
            placeholder="选择已通过的签名"
            value={signatureId}
            disabled={phase.step !== 'choose'}
            loading={signatures.isPending}
            options={signatures.data?.items.map((s) => ({ value: s.id, label: `【${s.name}】` }))}
            onChange={setSignatureId}
          />
        </div>
        <div className="flex flex-col gap-1 text-sm text-gray-700">
          模板
          <Select
            aria-label="批量发送模板"
            placeholder="选择已通过的模板"
            value={templateId}
            disabled={phase.step !== 'choose'}
            loading={templates.isPending}
            options={templates.data?.items.map((t) => ({ value: t.id, label: t.name }))}
            onChange={setTemplateId}
          />
        </div>
      </div>
      {error && <Alert type="error" showIcon title={error} />}
      {phase.step === 'choose' && (
        <>
          <div>
            <Button
              disabled={!templateId}
              onClick={() =>
                templateId && void downloadSmsBatchTemplate(projectId, templateId).catch(() => undefined)
              }
            >
              下载模板
            </Button>
          </div>
          <Upload.Dragger
            name="file"
            accept={{ format: ACCEPTED_EXTENSIONS.join(','), filter: 'native' }}
            showUploadList={false}
            disabled={!ready}
            beforeUpload={(file) => {
              upload(file as File);
              // Sent by hand above with the progress callback; antd must not post it itself.
              return Upload.LIST_IGNORE;
            }}
          >
            <p className="text-3xl text-[#4D8EFF]">
              <InboxOutlined aria-hidden="true" />
            </p>
            <p className="text-sm text-gray-800">
              {ready ? '点击或拖拽文件到此处上传' : '请先选择签名和模板，再上传号码文件'}
            </p>
            <p className="text-xs text-gray-500">
              支持 csv、xlsx，不超过 20 MB、10 万行；第一行为表头，需包含手机号列和模板变量列
            </p>
          </Upload.Dragger>
        </>
      )}
      {phase.step === 'uploading' && (
        <div className="flex flex-col gap-1">
          <Progress percent={phase.percent} size="small" aria-label="上传进度" />
          <p className="text-sm text-gray-500">
            {phase.percent < 100 ? '正在上传…' : '上传完成，正在检查号码和变量…'}
          </p>
        </div>
      )}
      {phase.step === 'preview' && (
        <>
          <SmsBatchPreviewPanel
            preview={phase.preview}
            busy={recounting || commit.isPending}
            onMappingChange={(mapping) => remap(phase.preview, mapping)}
          />
          {commit.isPending && (
            <Progress percent={100} status="active" showInfo={false} aria-label="正在提交" />
          )}
          <div className="flex gap-2">
            <Button
              type="primary"
              loading={commit.isPending}
              disabled={recounting || phase.preview.valid === 0}
              onClick={() => confirm(phase.preview)}
            >
              确认发送 {phase.preview.valid} 条
            </Button>
            <Button disabled={commit.isPending} onClick={() => setPhase({ step: 'choose' })}>
              重新上传
            </Button>
          </div>
        </>
      )}
      {phase.step === 'done' && (
        <Alert
          type="success"
          showIcon
          title={`已提交：${phase.batch.accepted} 条进入发送队列，${phase.batch.rejected} 行未通过`}
          description={
            <div className="flex flex-wrap items-center gap-3">
              {phase.batch.rejected > 0 && (
                <Button
                  size="small"
                  onClick={() =>
                    void downloadSmsBatchRejects(projectId, phase.batch.id).catch(() => undefined)
                  }
                >
                  下载未通过行
                </Button>
              )}
              <Link to={batchRecordsHref(phase.batch.id)}>查看发送记录</Link>
              <Button size="small" onClick={() => setPhase({ step: 'choose' })}>
                再发一批
              </Button>
            </div>
          }
        />
      )}
    </div>
  );
}
