import InboxOutlined from '@ant-design/icons/InboxOutlined';
import type { KnowledgeUploadResult } from '@callpilot/contracts';
import { Alert, Button, Progress, Upload } from 'antd';
import { useRef, useState } from 'react';
import { saveBlob } from '@/lib/request';
import { useUploadKnowledgeDocuments } from '../api/upload-knowledge-documents';
import {
  KNOWLEDGE_ACCEPT,
  precheckFile,
  QA_TEMPLATE_FILE_NAME,
  qaTemplateCsv,
} from '../utils/knowledge-files';

type Props = { projectId: string; knowledgeBaseId: string };

export function KnowledgeDocumentUpload({ projectId, knowledgeBaseId }: Props) {
  const upload = useUploadKnowledgeDocuments(projectId, knowledgeBaseId);
  const [progress, setProgress] = useState(0);
  const [result, setResult] = useState<KnowledgeUploadResult | null>(null);
  // antd asks about each file of a drop separately; the batch is sent once, on the last one.
  const handledBatches = useRef(new WeakSet<object>());

  const send = async (files: File[]) => {
    const rejectedHere: KnowledgeUploadResult['rejected'] = [];
    const toSend: File[] = [];
    for (const file of files) {
      const reason = precheckFile(file);
      if (reason) rejectedHere.push({ fileName: file.name, reason });
      else toSend.push(file);
    }
    setResult(null);
    if (toSend.length === 0) {
      setResult({ accepted: [], rejected: rejectedHere });
      return;
    }
    setProgress(0);
    try {
      const answer = await upload.mutateAsync({ files: toSend, onProgress: setProgress });
      setResult({ accepted: answer.accepted, rejected: [...rejectedHere, ...answer.rejected] });
    } catch {
      // The request client has already said why; the files refused here still deserve a word.
      if (rejectedHere.length > 0) setResult({ accepted: [], rejected: rejectedHere });
    }
  };

  return (
    <div className="flex flex-col gap-3">
      <Upload.Dragger
        name="file"
        multiple
        // 'native' lets a dropped file of another type through to the check below, which says why.
        accept={{ format: KNOWLEDGE_ACCEPT, filter: 'native' }}
        showUploadList={false}
        disabled={upload.isPending}
        beforeUpload={(_file, fileList) => {
          if (!handledBatches.current.has(fileList)) {
            handledBatches.current.add(fileList);
            void send(fileList as File[]);
          }
          // Sent by hand above; antd must neither post it nor keep it in its own list.
          return Upload.LIST_IGNORE;
        }}
      >
        <p className="text-3xl text-[#4D8EFF]">
          <InboxOutlined aria-hidden="true" />
        </p>
        <p className="text-sm text-gray-800">点击或拖拽文件到此处上传</p>
        <p className="text-xs text-gray-500">
          支持 txt、md、pdf、docx、csv、xlsx，单个文件不超过 20 MB，可一次选择多个文件
        </p>
      </Upload.Dragger>
      <p className="flex flex-wrap items-center gap-1 text-xs text-gray-500">
        csv、xlsx 按问答对导入：第一行为表头“问题”“答案”，每行一对，原样保存、不会被改写；
        可选“相似问题”列，填写来电者的其他问法，多个用换行或 | 分隔，每个问题最多 20 个。
        <Button
          type="link"
          size="small"
          className="px-0"
          onClick={() => saveBlob(qaTemplateCsv(), QA_TEMPLATE_FILE_NAME)}
        >
          下载问答对模板
        </Button>
      </p>
      {upload.isPending && (
        <div className="flex items-center gap-3 text-sm text-gray-600">
          <span className="shrink-0">正在上传</span>
          <Progress percent={progress} size="small" aria-label="上传进度" />
        </div>
      )}
      {result && <UploadResultNotice result={result} onClose={() => setResult(null)} />}
    </div>
  );
}

function UploadResultNotice({ result, onClose }: { result: KnowledgeUploadResult; onClose: () => void }) {
  const { accepted, rejected } = result;
  let title: string;
  if (rejected.length === 0) title = `已上传 ${accepted.length} 个文件，正在排队解析`;
  else if (accepted.length === 0) title = `${rejected.length} 个文件未能上传`;
  else title = `已上传 ${accepted.length} 个文件，${rejected.length} 个文件未能上传`;
  return (
    <Alert
      type={rejected.length === 0 ? 'success' : accepted.length === 0 ? 'error' : 'warning'}
      showIcon
      closable={{ onClose, 'aria-label': '关闭上传结果' }}
      title={title}
      description={
        <ul className="mt-1 flex flex-col gap-0.5 text-sm">
          {accepted.map((document) => (
            <li key={document.id}>
              <span className="text-gray-800">{document.fileName}</span>
              <span className="text-gray-500">：已加入解析队列</span>
            </li>
          ))}
          {rejected.map(({ fileName, reason }, index) => (
            // Two files may share a name; their position keeps them apart.
            // biome-ignore lint/suspicious/noArrayIndexKey: the list is never reordered
            <li key={`${fileName}-${index}`}>
              <span className="text-gray-800">{fileName}</span>
              <span className="text-[#FF5656]">：{reason}</span>
            </li>
          ))}
        </ul>
      }
    />
  );
}
