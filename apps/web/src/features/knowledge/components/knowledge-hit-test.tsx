import { hitTestRequest } from '@callpilot/contracts';
import { Button, Empty, Form, Input, InputNumber, Progress, Tag } from 'antd';
import { zodRule } from '@/lib/form-rules';
import { type HitTestInput, useHitTestKnowledgeBase } from '../api/hit-test-knowledge-base';
import { formatScore, RETRIEVAL_MODE_LABELS } from '../utils/knowledge-format';
import { KnowledgeSegmentText } from './knowledge-segment-text';

type Props = { projectId: string; knowledgeBaseId: string };

export function KnowledgeHitTest({ projectId, knowledgeBaseId }: Props) {
  const hitTest = useHitTestKnowledgeBase(projectId, knowledgeBaseId);
  const result = hitTest.data;

  return (
    <div className="flex flex-col gap-6">
      <Form<HitTestInput>
        name="knowledge-hit-test"
        layout="vertical"
        requiredMark={false}
        initialValues={{ query: '', topK: 5 }}
        onFinish={({ query, topK }) => hitTest.mutate({ query: query.trim(), topK })}
      >
        <p className="mb-3 text-sm text-gray-500">
          输入一句客户可能会问的话，查看知识库会召回哪些分段、相关度多高。助手只会使用得分高于其阈值的分段。
        </p>
        <Form.Item label="测试问题" name="query" rules={[zodRule(hitTestRequest.shape.query)]}>
          <Input.TextArea rows={2} maxLength={200} showCount placeholder="例如：你们周末上班吗？" />
        </Form.Item>
        <div className="flex items-end gap-3">
          <Form.Item
            label="召回条数"
            name="topK"
            rules={[zodRule(hitTestRequest.shape.topK)]}
            className="mb-0"
          >
            <InputNumber min={1} max={20} precision={0} />
          </Form.Item>
          <Button type="primary" htmlType="submit" loading={hitTest.isPending}>
            测试
          </Button>
        </div>
      </Form>

      {result && (
        <section aria-label="命中结果" className="flex flex-col gap-3">
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
                    <span className="flex w-48 items-center gap-2">
                      <Progress
                        percent={Math.round(segment.score * 100)}
                        showInfo={false}
                        size="small"
                        aria-label={`相关度 ${formatScore(segment.score)}`}
                      />
                      <span className="font-mono text-sm text-gray-900">{formatScore(segment.score)}</span>
                    </span>
                    <span className="text-xs text-gray-500">{segment.documentName}</span>
                  </div>
                  <KnowledgeSegmentText segment={segment} />
                </li>
              ))}
            </ol>
          )}
        </section>
      )}
    </div>
  );
}
