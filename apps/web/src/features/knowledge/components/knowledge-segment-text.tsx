import { Tag } from 'antd';
import { Fragment } from 'react';

/**
 * A segment as it reads: question and answer for a pair, the text otherwise. A pair's similar
 * questions (相似问), when it has any, are counted in a tag and listed under its question.
 */
export function KnowledgeSegmentText({
  segment,
}: {
  segment: { content: string; question: string | null; answer: string | null; similarQuestions?: string[] };
}) {
  if (segment.question !== null) {
    const similar = segment.similarQuestions ?? [];
    return (
      <dl className="grid grid-cols-[auto_1fr] gap-x-2 gap-y-1 text-sm">
        <dt className="font-medium text-[#4D8EFF]">问</dt>
        <dd className="m-0 whitespace-pre-wrap text-gray-900">
          {segment.question}
          {similar.length > 0 && (
            <div className="mt-1 flex items-start gap-1.5">
              <Tag color="blue" bordered={false} className="m-0 shrink-0">
                相似问 {similar.length}
              </Tag>
              <p title={similar.join('\n')} className="m-0 line-clamp-2 text-xs leading-5 text-gray-500">
                {similar.map((phrasing, index) => (
                  <Fragment key={phrasing}>
                    {index > 0 && <span aria-hidden="true">；</span>}
                    <span>{phrasing}</span>
                  </Fragment>
                ))}
              </p>
            </div>
          )}
        </dd>
        <dt className="font-medium text-emerald-600">答</dt>
        <dd className="m-0 whitespace-pre-wrap text-gray-700">{segment.answer}</dd>
      </dl>
    );
  }
  return <p className="m-0 line-clamp-6 whitespace-pre-wrap text-sm text-gray-800">{segment.content}</p>;
}
