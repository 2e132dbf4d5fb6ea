import { KNOWLEDGE_FILE_TYPES, KNOWLEDGE_MAX_FILE_BYTES, type KnowledgeFileType } from '@callpilot/contracts';

// The server's own words, so a file refused here reads the same as one refused there.
export const UNSUPPORTED_TYPE_MESSAGE = '不支持的文件类型，仅支持 txt、md、pdf、docx、csv、xlsx';
export const OVERSIZE_MESSAGE = `文件超过 ${KNOWLEDGE_MAX_FILE_BYTES / 1024 / 1024} MB`;
export const EMPTY_FILE_MESSAGE = '文件为空';

export const KNOWLEDGE_ACCEPT = KNOWLEDGE_FILE_TYPES.map((type) => `.${type}`).join(',');

export function fileTypeOf(fileName: string): KnowledgeFileType | undefined {
  const extension = fileName.split('.').pop()?.toLowerCase();
  return KNOWLEDGE_FILE_TYPES.find((type) => type === extension && fileName.includes('.'));
}

/** Why the server would refuse this file, or undefined when it may be sent. */
export function precheckFile(file: Pick<File, 'name' | 'size'>): string | undefined {
  if (!fileTypeOf(file.name)) return UNSUPPORTED_TYPE_MESSAGE;
  if (file.size === 0) return EMPTY_FILE_MESSAGE;
  if (file.size > KNOWLEDGE_MAX_FILE_BYTES) return OVERSIZE_MESSAGE;
  return undefined;
}

export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

/** The header row the server reads question-answer files by; 相似问题 is optional. */
export const QA_TEMPLATE_FILE_NAME = '问答对模板.csv';

const QA_TEMPLATE_ROWS = [
  ['问题', '答案', '相似问题'],
  [
    '你们的营业时间是几点？',
    '我们的营业时间是周一至周五 9:00-18:00，节假日除外。',
    '几点开门\n周末营业吗\n几点下班',
  ],
  [
    '怎么申请退款？',
    '请在订单页面点击"申请退款"，审核通过后 3 个工作日内原路退回。',
    '钱怎么退回来|不想要了怎么退款',
  ],
];

const csvCell = (value: string) => (/[",\n]/.test(value) ? `"${value.replaceAll('"', '""')}"` : value);

/** A small CSV built in the browser; the BOM makes Excel open the Chinese text as UTF-8. */
export function qaTemplateCsv(): Blob {
  const text = QA_TEMPLATE_ROWS.map((row) => row.map(csvCell).join(',')).join('\r\n');
  return new Blob([`\uFEFF${text}\r\n`], { type: 'text/csv;charset=utf-8' });
}
