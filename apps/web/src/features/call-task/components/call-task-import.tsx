import InboxOutlined from '@ant-design/icons/InboxOutlined';
import { type ColumnMapping, IMPORT_REJECT_LABELS, type ImportPreview } from '@callpilot/contracts';
import { Alert, Button, Input, Progress, Segmented, Select, Table, Upload } from 'antd';
import { useRef, useState } from 'react';
import {
  downloadImportRejects,
  downloadImportTemplate,
  type ImportRejectKind,
  type ImportResult,
  pasteTaskImport,
  previewTaskImport,
  uploadTaskImport,
  useCommitTaskImport,
} from '../api/task-imports';

export const IMPORT_MAX_BYTES = 20 * 1024 * 1024;
const ACCEPTED_EXTENSIONS = ['.csv', '.xlsx'];

/** Refuses what the server would refuse anyway, before sending 20 MB for nothing. */
export function precheckImportFile(file: { name: string; size: number }): string | null {
  const name = file.name.toLowerCase();
  if (!ACCEPTED_EXTENSIONS.some((extension) => name.endsWith(extension))) {
    return `${file.name}：只支持 csv 或 xlsx 文件`;
  }
  if (file.size > IMPORT_MAX_BYTES) return `${file.name}：文件不能超过 20 MB`;
  return null;
}

type Phase = { kind: 'idle' } | { kind: 'uploading'; percent: number } | { kind: 'parsing' };

type Props = {
  projectId: string;
  taskId: string;
  /** The task assistant's variables, each mappable to a column. */
  variables: string[];
  onCommitted?: (result: ImportResult) => void;
};

export function CallTaskImport({ projectId, taskId, variables, onCommitted }: Props) {
  const [source, setSource] = useState<'file' | 'paste'>('file');
  const [phase, setPhase] = useState<Phase>({ kind: 'idle' });
  const [pasted, setPasted] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [preview, setPreview] = useState<ImportPreview | null>(null);
  const [recounting, setRecounting] = useState(false);
  const [result, setResult] = useState<ImportResult | null>(null);
  const [committedImportId, setCommittedImportId] = useState<string | null>(null);
  const commit = useCommitTaskImport(projectId, taskId);
  // Only the latest mapping's answer may land: an older recount finishing late must not win.
  const recountSeq = useRef(0);

  const busy = phase.kind !== 'idle' || commit.isPending;

  const load = async (read: () => Promise<ImportPreview>) => {
    setError(null);
    setResult(null);
    setPreview(null);
    try {
      setPreview(await read());
    } catch {
      // The request client has already said why.
    } finally {
      setPhase({ kind: 'idle' });
    }
  };

  const upload = (file: File) => {
    const refused = precheckImportFile(file);
    if (refused) {
      setError(refused);
      return;
    }
    setPhase({ kind: 'uploading', percent: 0 });
    void load(() =>
      uploadTaskImport(projectId, taskId, file, (percent) =>
        // Once every byte is sent the wait is the server reading the rows.
        setPhase(percent >= 100 ? { kind: 'parsing' } : { kind: 'uploading', percent }),
      ),
    );
  };

  const parsePasted = () => {
    if (pasted.trim() === '') {
      setError('请粘贴号码，每行一个');
      return;
    }
    setPhase({ kind: 'parsing' });
    void load(() => pasteTaskImport(projectId, taskId, pasted));
  };

  const remap = async (mapping: ColumnMapping) => {
    if (!preview) return;
    const seq = ++recountSeq.current;
    setPreview({ ...preview, mapping });
    setRecounting(true);
    try {
      const recounted = await previewTaskImport(projectId, taskId, preview.importId, mapping);
      if (seq === recountSeq.current) setPreview(recounted);
    } catch {
      // Reported by the request client; the previous counts stay.
    } finally {
      if (seq === recountSeq.current) setRecounting(false);
    }
  };

  const confirm = () => {
    if (!preview) return;
    commit.mutate(
      { importId: preview.importId, mapping: preview.mapping },
      {
        onSuccess: (answer) => {
          setResult(answer);
          setCommittedImportId(preview.importId);
          setPreview(null);
          setPasted('');
          onCommitted?.(answer);
        },
      },
    );
  };

  return (
    <div className="flex flex-col gap-4">
      <div className="flex flex-wrap items-center justify-between gap-3">
        <Segmented
          aria-label="导入方式"
          value={source}
          onChange={(value) => setSource(value as 'file' | 'paste')}
          options={[
            { value: 'file', label: '上传文件' },
            { value: 'paste', label: '粘贴号码' },
          ]}
          disabled={busy}
        />
        <span className="flex items-center gap-1 text-sm text-gray-500">
          下载模板：
          <Button
            type="link"
            size="small"
            className="!px-0"
            onClick={() => void downloadImportTemplate(projectId, taskId, 'csv').catch(() => undefined)}
          >
            CSV 模板
          </Button>
          <Button
            type="link"
            size="small"
            className="!px-0"
            onClick={() => void downloadImportTemplate(projectId, taskId, 'xlsx').catch(() => undefined)}
          >
            Excel 模板
          </Button>
        </span>
      </div>

      {source === 'file' ? (
        <Upload.Dragger
          name="file"
          accept={{ format: ACCEPTED_EXTENSIONS.join(','), filter: 'native' }}
          showUploadList={false}
          disabled={busy}
          beforeUpload={(file) => {
            upload(file as File);
            // Sent by hand above with the progress callback; antd must not post it itself.
            return Upload.LIST_IGNORE;
          }}
        >
          <p className="text-3xl text-[#4D8EFF]">
            <InboxOutlined aria-hidden="true" />
          </p>
          <p className="text-sm text-gray-800">点击或拖拽文件到此处上传</p>
          <p className="text-xs text-gray-500">
            支持 csv、xlsx，不超过 20 MB、10 万行；第一行为表头，需包含号码列，可含姓名与小助手变量列
          </p>
        </Upload.Dragger>
      ) : (
        <div className="flex flex-col gap-2">
          <Input.TextArea
            aria-label="号码列表"
            value={pasted}
            onChange={(event) => setPasted(event.target.value)}
            autoSize={{ minRows: 5, maxRows: 12 }}
            placeholder={'每行一个号码，可在号码后用逗号或 Tab 加姓名，如：\n13800000001,张三\n13800000002'}
            disabled={busy}
          />
          <div>
            <Button onClick={parsePasted} disabled={busy}>
              解析号码
            </Button>
          </div>
        </div>
      )}

      {phase.kind === 'uploading' && (
        <div className="flex items-center gap-3 text-sm text-gray-600">
          <span className="shrink-0">正在上传</span>
          <Progress percent={phase.percent} size="small" aria-label="上传进度" />
        </div>
      )}
      {phase.kind === 'parsing' && <p className="text-sm text-gray-600">解析中，大文件需要一点时间...</p>}
      {error && <Alert type="error" showIcon title={error} />}

      {preview && (
        <ImportPreviewPanel
          projectId={projectId}
          taskId={taskId}
          preview={preview}
          variables={variables}
          recounting={recounting}
          committing={commit.isPending}
          onMappingChange={(mapping) => void remap(mapping)}
          onConfirm={confirm}
          onCancel={() => setPreview(null)}
        />
      )}

      {result && committedImportId && (
        <Alert
          type={result.added > 0 ? 'success' : 'warning'}
          showIcon
          title={`已导入 ${result.added} 个联系人`}
          description={
            <RejectCounts
              counts={{
                invalid: result.invalid,
                duplicate: result.duplicates,
                do_not_call: result.doNotCall,
              }}
              onDownload={(kind) => downloadImportRejects(projectId, taskId, committedImportId, kind)}
            />
          }
        />
      )}
    </div>
  );
}

function RejectCounts({
  counts,
  onDownload,
}: {
  counts: Record<ImportRejectKind, number>;
  onDownload: (kind: ImportRejectKind) => Promise<void>;
}) {
  const kinds = (Object.keys(counts) as ImportRejectKind[]).filter((kind) => counts[kind] > 0);
  if (kinds.length === 0) return <span>没有被排除的行</span>;
  return (
    <span className="flex flex-wrap gap-x-4">
      {kinds.map((kind) => (
        <span key={kind}>
          未导入{IMPORT_REJECT_LABELS[kind]} {counts[kind]} 行
          <Button
            type="link"
            size="small"
            aria-label={`下载${IMPORT_REJECT_LABELS[kind]}`}
            onClick={() => void onDownload(kind).catch(() => undefined)}
          >
            下载
          </Button>
        </span>
      ))}
    </span>
  );
}

function ImportPreviewPanel({
  projectId,
  taskId,
  preview,
  variables,
  recounting,
  committing,
  onMappingChange,
  onConfirm,
  onCancel,
}: {
  projectId: string;
  taskId: string;
  preview: ImportPreview;
  variables: string[];
  recounting: boolean;
  committing: boolean;
  onMappingChange: (mapping: ColumnMapping) => void;
  onConfirm: () => void;
  onCancel: () => void;
}) {
  const { mapping } = preview;
  const headerOptions = preview.headers.map((header) => ({ value: header, label: header }));
  const variableNames = [...new Set([...variables, ...Object.keys(mapping.variables)])];
  const download = (kind: ImportRejectKind) =>
    downloadImportRejects(projectId, taskId, preview.importId, kind);

  const counts: { label: string; value: number; kind?: ImportRejectKind }[] = [
    { label: '总行数', value: preview.rows },
    { label: '有效', value: preview.valid },
    { label: '号码无效', value: preview.invalid, kind: 'invalid' },
    { label: '重复', value: preview.duplicates, kind: 'duplicate' },
    { label: '免打扰', value: preview.doNotCall, kind: 'do_not_call' },
  ];

  return (
    <section aria-label="导入预览" className="flex flex-col gap-4 rounded-lg border border-gray-200 p-4">
      <h3 className="text-base font-medium text-gray-900">
        {preview.fileName ? `「${preview.fileName}」` : '粘贴内容'}的列对应
      </h3>
      <div className="grid grid-cols-1 gap-3 md:grid-cols-3">
        <div className="flex flex-col gap-1 text-sm text-gray-700">
          <span>
            号码<span className="text-[#FF5656]">*</span>
          </span>
          <Select
            aria-label="号码列"
            value={mapping.phone || undefined}
            placeholder="选择号码所在列"
            options={headerOptions}
            onChange={(phone: string) => onMappingChange({ ...mapping, phone })}
          />
        </div>
        <div className="flex flex-col gap-1 text-sm text-gray-700">
          <span>姓名</span>
          <Select
            aria-label="姓名列"
            allowClear
            value={mapping.name || undefined}
            placeholder="不导入姓名"
            options={headerOptions}
            onChange={(name: string | undefined) => onMappingChange({ ...mapping, name: name ?? '' })}
          />
        </div>
        {variableNames.map((variable) => (
          <div key={variable} className="flex flex-col gap-1 text-sm text-gray-700">
            <span>变量：{variable}</span>
            <Select
              aria-label={`变量 ${variable} 列`}
              allowClear
              value={mapping.variables[variable] || undefined}
              placeholder="不导入"
              options={headerOptions}
              onChange={(column: string | undefined) => {
                const next = { ...mapping.variables };
                if (column) next[variable] = column;
                else delete next[variable];
                onMappingChange({ ...mapping, variables: next });
              }}
            />
          </div>
        ))}
      </div>

      <dl aria-label="校验结果" aria-busy={recounting} className="grid grid-cols-2 gap-3 sm:grid-cols-5">
        {counts.map(({ label, value, kind }) => (
          <div key={label} className="rounded bg-gray-50 px-3 py-2">
            <dt className="text-xs text-gray-500">{label}</dt>
            <dd className="flex items-baseline gap-1 text-lg font-semibold text-gray-900">
              {value.toLocaleString('zh-CN')}
              {kind && value > 0 && (
                <Button
                  type="link"
                  size="small"
                  className="!px-1"
                  aria-label={`下载${label}`}
                  onClick={() => void download(kind).catch(() => undefined)}
                >
                  下载
                </Button>
              )}
            </dd>
          </div>
        ))}
      </dl>

      <Table<{ key: number; values: Record<string, string> }>
        size="small"
        aria-label="数据样例"
        pagination={false}
        scroll={{ x: 'max-content' }}
        // Wrapped, so a column named like a table field (key) cannot collide with the row key.
        dataSource={preview.sample.map((values, index) => ({ key: index, values }))}
        columns={preview.headers.map((header) => ({
          title: header,
          key: header,
          render: (_, row) => row.values[header] ?? '',
        }))}
        locale={{ emptyText: '没有数据行' }}
      />
      <p className="text-xs text-gray-500">
        样例为前 {preview.sample.length} 行；号码无效、重复与免打扰的行不会导入。
      </p>

      <div className="flex gap-2">
        <Button
          type="primary"
          onClick={onConfirm}
          loading={committing}
          disabled={recounting || preview.valid === 0 || !mapping.phone}
        >
          确认导入
        </Button>
        <Button onClick={onCancel} disabled={committing}>
          重新选择
        </Button>
      </div>
    </section>
  );
}
