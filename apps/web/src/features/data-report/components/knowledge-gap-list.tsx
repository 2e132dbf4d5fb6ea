import type { KnowledgeGapTopic } from '@callpilot/contracts';
import { Alert, Button, List, Tooltip } from 'antd';
import dayjs from 'dayjs';
import { useState } from 'react';
import { Link } from 'react-router';
import { useKnowledgeGaps } from '../api/get-knowledge-gaps';
import type { ReportQuery } from '../utils/report-range';
import { callDetailHref } from '../utils/report-range';
import { type GapDialog, KnowledgeGapDialog } from './knowledge-gap-dialog';
import { ReportEmpty } from './report-empty';
import { ReportSection } from './report-section';

/** 知识缺口: callers' questions no knowledge base answered, grouped by topic, each fixable in place. */
export function KnowledgeGapList({ projectId, query }: { projectId: string; query: ReportQuery }) {
  const { data, isPending, isError } = useKnowledgeGaps(projectId, query);
  const [dialog, setDialog] = useState<GapDialog | null>(null);
  const topics = data?.topics ?? [];

  return (
    <ReportSection title={`知识缺口${data ? `（${data.total}）` : ''}`}>
      {isError ? (
        <Alert type="error" showIcon title="知识缺口加载失败，请稍后重试。" />
      ) : isPending ? null : topics.length === 0 ? (
        <ReportEmpty text="没有未解答的问题：客户在通话中问到知识库答不上的问题时，会按话题列在这里。" />
      ) : (
        <List<KnowledgeGapTopic>
          aria-label="知识缺口"
          dataSource={topics}
          renderItem={(topic) => (
            <List.Item
              aria-label={topic.question}
              actions={[
                <Tooltip
                  key="similar"
                  title={topic.suggestedPair ? undefined : '没有相近的问答对，请新建问答对'}
                >
                  <Button
                    size="small"
                    disabled={!topic.suggestedPair}
                    onClick={() => setDialog({ as: 'similar', topic })}
                  >
                    添加为相似问
                  </Button>
                </Tooltip>,
                <Button
                  key="pair"
                  size="small"
                  type="primary"
                  onClick={() => setDialog({ as: 'pair', topic })}
                >
                  新建问答对
                </Button>,
              ]}
            >
              <List.Item.Meta
                title={
                  <span>
                    {topic.question}
                    <span className="ml-2 text-xs font-normal text-gray-500">
                      {topic.count} 次 · {topic.knowledgeBaseName}
                    </span>
                  </span>
                }
                description={
                  <ul className="flex flex-col gap-0.5">
                    {topic.examples.map((example) => (
                      <li key={`${example.callId}:${example.turnIndex}`}>
                        <Link to={callDetailHref(example.callId, example.turnIndex)}>
                          “{example.question}”
                        </Link>
                        <span className="ml-2 text-xs text-gray-400">
                          {dayjs(example.askedAt).format('MM-DD HH:mm')}
                        </span>
                      </li>
                    ))}
                  </ul>
                }
              />
            </List.Item>
          )}
        />
      )}
      <KnowledgeGapDialog projectId={projectId} dialog={dialog} onClose={() => setDialog(null)} />
    </ReportSection>
  );
}
