/** A segment as it reads: question and answer for a pair, the text otherwise. */
export function KnowledgeSegmentText({
  segment,
}: {
  segment: { content: string; question: string | null; answer: string | null };
}) {
  if (segment.question !== null) {
    return (
      <dl className="grid grid-cols-[auto_1fr] gap-x-2 gap-y-1 text-sm">
        <dt className="font-medium text-[#4D8EFF]">问</dt>
        <dd className="m-0 whitespace-pre-wrap text-gray-900">{segment.question}</dd>
        <dt className="font-medium text-emerald-600">答</dt>
        <dd className="m-0 whitespace-pre-wrap text-gray-700">{segment.answer}</dd>
      </dl>
    );
  }
  return <p className="m-0 line-clamp-6 whitespace-pre-wrap text-sm text-gray-800">{segment.content}</p>;
}
