import type { ReviewChange } from '@callpilot/contracts';
import { Empty, Tag } from 'antd';

const KIND_TAGS: Record<ReviewChange['kind'], { color: string; text: string }> = {
  added: { color: 'green', text: '新增' },
  removed: { color: 'red', text: '删除' },
  changed: { color: 'blue', text: '修改' },
};

const show = (value: unknown) =>
  value === null || value === undefined
    ? '—'
    : typeof value === 'string'
      ? value
      : JSON.stringify(value, null, 2);

/** The submission against the live version, one row per changed field, long text shown whole. */
export function ReviewChanges({ changes }: { changes: ReviewChange[] }) {
  if (changes.length === 0) return <Empty description="与线上版本相比没有变化" />;
  return (
    <ul aria-label="变更内容" className="m-0 flex list-none flex-col gap-3 p-0">
      {changes.map((change) => (
        <li key={change.path} className="rounded border border-gray-200 p-3">
          <div className="mb-2 flex items-center gap-2">
            <Tag color={KIND_TAGS[change.kind].color}>{KIND_TAGS[change.kind].text}</Tag>
            <span className="font-medium">{change.label}</span>
          </div>
          <div className="grid grid-cols-2 gap-2 text-xs">
            <div>
              <div className="mb-1 text-gray-400">线上版本</div>
              <pre className="m-0 max-h-60 overflow-auto whitespace-pre-wrap break-all rounded bg-red-50 p-2">
                {show(change.before)}
              </pre>
            </div>
            <div>
              <div className="mb-1 text-gray-400">提交内容</div>
              <pre className="m-0 max-h-60 overflow-auto whitespace-pre-wrap break-all rounded bg-green-50 p-2">
                {show(change.after)}
              </pre>
            </div>
          </div>
        </li>
      ))}
    </ul>
  );
}
