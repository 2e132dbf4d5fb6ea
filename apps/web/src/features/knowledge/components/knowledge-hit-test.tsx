import { hitTestRequest } from '@callpilot/contracts';
import { Button, Form, Input, InputNumber, Select } from 'antd';
import { useLlmProviderOptions } from '@/entities/assistant/api/get-llm-provider-options';
import { zodRule } from '@/lib/form-rules';
import { type HitTestInput, useHitTestKnowledgeBase } from '../api/hit-test-knowledge-base';
import { KnowledgeHitTestResult } from './knowledge-hit-test-result';

type Props = { projectId: string; knowledgeBaseId: string };

/** The assistant's default 相似度阈值: what an operator should test with unless they changed it. */
const DEFAULT_THRESHOLD = 0.3;

export function KnowledgeHitTest({ projectId, knowledgeBaseId }: Props) {
  const hitTest = useHitTestKnowledgeBase(projectId, knowledgeBaseId);
  const providers = useLlmProviderOptions(projectId);
  const result = hitTest.data;

  return (
    <div className="flex flex-col gap-6">
      <Form<HitTestInput>
        name="knowledge-hit-test"
        layout="vertical"
        requiredMark={false}
        initialValues={{ query: '', topK: 5, scoreThreshold: DEFAULT_THRESHOLD }}
        onFinish={({ query, topK, scoreThreshold, llmProviderId }) =>
          hitTest.mutate({
            query: query.trim(),
            topK,
            scoreThreshold,
            ...(llmProviderId ? { llmProviderId } : {}),
          })
        }
      >
        <p className="mb-3 text-sm text-gray-500">
          输入一句客户可能会问的话，查看助手会怎么做：知识库召回哪些分段、置信度多高、是作答还是拒答。助手只在最佳分段的置信度不低于阈值时作答。
        </p>
        <Form.Item label="测试问题" name="query" rules={[zodRule(hitTestRequest.shape.query)]}>
          <Input.TextArea
            rows={2}
            maxLength={200}
            showCount
            placeholder="例如：喂你好，我想问下你们周末上班吗？"
          />
        </Form.Item>
        <div className="flex flex-wrap items-start gap-3">
          <Form.Item label="召回条数" name="topK" rules={[zodRule(hitTestRequest.shape.topK)]}>
            <InputNumber min={1} max={20} precision={0} />
          </Form.Item>
          <Form.Item
            label="置信度阈值"
            name="scoreThreshold"
            tooltip="与小助手知识库设置中的相似度阈值相同：最佳分段的置信度低于它时，助手不作答"
            rules={[zodRule(hitTestRequest.shape.scoreThreshold)]}
          >
            <InputNumber min={0} max={1} step={0.05} precision={2} />
          </Form.Item>
          <Form.Item
            label="大模型改写与重排"
            name="llmProviderId"
            tooltip="用所选模型配置的对话模型把来电者的话改写成清楚的问题，并复核候选分段的排序，与开启了「大模型改写与重排」的小助手相同；会增加耗时"
            className="min-w-64"
          >
            <Select
              allowClear
              placeholder="不使用"
              loading={providers.isLoading}
              notFoundContent="项目还没有模型配置，可在小助手的模型设置中添加"
              options={(providers.data ?? []).map((provider) => ({
                value: provider.id,
                label: `${provider.name}（${provider.model}）`,
              }))}
            />
          </Form.Item>
          {/* Level with the inputs, below their labels (a vertical form's label row is 30px). */}
          <Button type="primary" htmlType="submit" loading={hitTest.isPending} className="mt-[30px]">
            测试
          </Button>
        </div>
      </Form>

      {result && <KnowledgeHitTestResult result={result} />}
    </div>
  );
}
