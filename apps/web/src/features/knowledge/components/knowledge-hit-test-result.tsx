import {
  type HitTestResult,
  type HitTestSegment,
  KNOWLEDGE_VERDICT_LABELS,
  type MatchedTerm,
} from '@callpilot/contracts';
import { Alert, Empty, Progress, Tag } from 'antd';
import { formatScore, RETRIEVAL_MODE_LABELS } from '../utils/knowledge-format';
import { KnowledgeSegmentText } from './knowledge-segment-text';

const termLabel = (term: MatchedTerm) => (term.via ? `${term.term}→${term.via}` : term.term);

const WEIGHT_HINT = '权重：该词在问题中所占的比重，知识库里越常见的词越轻';

/** What the assistant would do with this question, and the numbers it decided on. */
function VerdictBanner({ result }: { result: HitTestResult }) {
  return (
    <Alert
      showIcon
      type={result.answered ? 'success' : 'warning'}
      message={KNOWLEDGE_VERDICT_LABELS[result.verdict]}
      description={
        <>
          <span>{`置信度 ${formatScore(result.confidence)}，阈值 ${formatScore(result.threshold)}`}</span>
          {!result.answered && (
            <span className="ml-2 text-gray-500">助手不会用这些分段作答，会告诉来电者稍后由同事跟进</span>
          )}
        </>
      }
    />
  );
}

/** The caller's words as the search saw them: what was dropped, what was renamed, what a model rewrote. */
function QueryAnalysis({ result }: { result: HitTestResult }) {
  const { query, rewriteMs, rerankMs, llmNotice } = result;
  const timings = [
    rewriteMs !== null ? `改写 ${Math.round(rewriteMs)} ms` : null,
    rerankMs !== null ? `重排 ${Math.round(rerankMs)} ms` : null,
  ].filter((text) => text !== null);
  return (
    <section aria-label="问题分析" className="flex flex-col gap-2 rounded-lg bg-gray-50 p-4 text-sm">
      <dl className="m-0 grid grid-cols-[auto_1fr] gap-x-3 gap-y-2">
        <dt className="text-gray-500">原话</dt>
        <dd className="m-0 text-gray-900">{query.original}</dd>
        {query.removedFillers.length > 0 && (
          <>
            <dt className="text-gray-500">去掉的口语词</dt>
            <dd className="m-0 flex flex-wrap gap-1">
              {query.removedFillers.map((filler) => (
                <Tag key={filler} bordered={false} className="m-0">
                  <del>{filler}</del>
                </Tag>
              ))}
            </dd>
          </>
        )}
        {query.normalized.length > 0 && (
          <>
            <dt className="text-gray-500">规范说法</dt>
            <dd className="m-0 flex flex-wrap gap-1">
              {query.normalized.map(({ from, to }) => (
                <Tag key={`${from}→${to}`} color="blue" bordered={false} className="m-0">
                  {`${from}→${to}`}
                </Tag>
              ))}
            </dd>
          </>
        )}
        <dt className="text-gray-500">检索用语</dt>
        <dd className="m-0 text-gray-900">{query.cleaned}</dd>
        {query.rewritten !== null && (
          <>
            <dt className="text-gray-500">大模型改写</dt>
            <dd className="m-0 text-gray-900">{query.rewritten}</dd>
          </>
        )}
        {timings.length > 0 && (
          <>
            <dt className="text-gray-500">大模型耗时</dt>
            <dd className="m-0 text-gray-900">{timings.join(' · ')}</dd>
          </>
        )}
      </dl>
      {llmNotice && <Alert type="warning" showIcon message={llmNotice} />}
    </section>
  );
}

function HitTerms({ segment, queryTerms }: { segment: HitTestSegment; queryTerms: string[] }) {
  const matched = new Set(segment.matchedTerms.map((term) => term.term));
  const unmatched = queryTerms.filter((term) => !matched.has(term));
  if (segment.matchedTerms.length === 0 && unmatched.length === 0) return null;
  return (
    <div className="mb-2 flex flex-wrap items-center gap-1 text-xs">
      {segment.matchedTerms.length > 0 && (
        <fieldset aria-label="匹配的词" className="m-0 flex min-w-0 flex-wrap gap-1 border-0 p-0">
          {segment.matchedTerms.map((term) => (
            <Tag
              key={termLabel(term)}
              color={term.via ? 'blue' : 'green'}
              bordered={false}
              className="m-0"
              title={WEIGHT_HINT}
            >
              {`${termLabel(term)} ${formatScore(term.weight)}`}
            </Tag>
          ))}
        </fieldset>
      )}
      {unmatched.length > 0 && (
        <fieldset aria-label="未匹配的词" className="m-0 flex min-w-0 flex-wrap gap-1 border-0 p-0">
          {unmatched.map((term) => (
            <Tag key={term} bordered={false} className="m-0 text-gray-400" title="该分段不含这个词">
              {term}
            </Tag>
          ))}
        </fieldset>
      )}
    </div>
  );
}

export function KnowledgeHitTestResult({ result }: { result: HitTestResult }) {
  // The response lists a segment's matched terms only; a term another hit matched but this one
  // lacks is what an operator needs to see greyed, to tell why it ranked lower.
  const queryTerms = [...new Set(result.segments.flatMap((s) => s.matchedTerms.map((t) => t.term)))];
  return (
    <section aria-label="命中结果" className="flex flex-col gap-3">
      <VerdictBanner result={result} />
      <QueryAnalysis result={result} />
      <p className="text-sm text-gray-500">
        <Tag color="blue">{RETRIEVAL_MODE_LABELS[result.mode]}</Tag>
        {`命中 ${result.segments.length} 个分段，耗时 ${Math.round(result.tookMs)} ms`}
      </p>
      {result.segments.length === 0 ? (
        <Empty description="未命中任何分段：换个说法试试，或检查相关文档是否已解析完成、分段是否已启用" />
      ) : (
        <ol className="m-0 flex list-none flex-col gap-3 p-0">
          {result.segments.map((segment, index) => (
            <li key={segment.id} className="rounded-lg border border-gray-200 p-4">
              <div className="mb-2 flex flex-wrap items-center gap-3">
                <span className="font-semibold text-gray-900">{`#${index + 1}`}</span>
                <span className="flex w-56 items-center gap-2">
                  <span className="shrink-0 text-xs text-gray-500">置信度</span>
                  <Progress
                    percent={Math.round(segment.score * 100)}
                    showInfo={false}
                    size="small"
                    status={segment.score >= result.threshold ? 'success' : 'normal'}
                    aria-label={`置信度 ${formatScore(segment.score)}`}
                  />
                  <span className="font-mono text-sm text-gray-900">{formatScore(segment.score)}</span>
                </span>
                <span
                  className="text-xs text-gray-500"
                  title="校准前的原始相关度：问题中按权重计有多少被该分段覆盖"
                >{`相关度 ${formatScore(segment.relevance)}`}</span>
                {segment.rerankPosition !== null && (
                  <Tag
                    color="purple"
                    bordered={false}
                    className="m-0"
                  >{`重排第 ${segment.rerankPosition}`}</Tag>
                )}
                {segment.score < result.threshold && (
                  <Tag bordered={false} className="m-0">
                    低于阈值
                  </Tag>
                )}
                <span className="text-xs text-gray-500">{segment.documentName}</span>
              </div>
              <HitTerms segment={segment} queryTerms={queryTerms} />
              <KnowledgeSegmentText segment={segment} />
            </li>
          ))}
        </ol>
      )}
    </section>
  );
}
