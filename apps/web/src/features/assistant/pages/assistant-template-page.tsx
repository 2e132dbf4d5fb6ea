import { ASSISTANT_USE_LABELS, type AssistantTemplate } from '@callpilot/contracts';
import { Button, Card, Empty, Skeleton, Tag, Tooltip } from 'antd';
import { useNavigate } from 'react-router';
import { FeatureUnavailableAlert } from '@/components/feature-unavailable-alert';
import { useFeatureAvailable } from '@/hooks/use-feature-available';
import { selectCurrentProjectId, useUserStore } from '@/stores/user-store';
import { useCreateAssistant } from '../api/create-assistant';
import { useAssistantTemplates } from '../api/get-assistant-templates';

export function AssistantTemplatePage() {
  const projectId = useUserStore(selectCurrentProjectId);
  const navigate = useNavigate();
  const available = useFeatureAvailable('assistant');
  const templates = useAssistantTemplates(projectId);
  const create = useCreateAssistant(projectId ?? '');

  const createFromTemplate = async (template: AssistantTemplate) => {
    // The server fills the rest (prompt, opening line, rules...) from the template.
    const created = await create.mutateAsync({
      name: template.name,
      description: template.description,
      use: template.use,
      templateKey: template.key,
    });
    navigate(`/assistant/edit?id=${encodeURIComponent(created.id)}`);
  };

  return (
    <main className="flex flex-col gap-4 p-6">
      <header className="flex items-center justify-between gap-3">
        <div>
          <h1 className="text-2xl font-semibold text-gray-900">从模板创建</h1>
          <p className="mt-1 text-sm text-gray-500">
            选择一个常见场景的模板，创建后可以继续修改提示词、开场白和知识库。
          </p>
        </div>
        <Button onClick={() => navigate('/assistant/list')}>返回列表</Button>
      </header>
      <FeatureUnavailableAlert feature="assistant" />
      {templates.isPending ? (
        <Skeleton active />
      ) : (templates.data ?? []).length === 0 ? (
        <Empty description="暂无可用模板" />
      ) : (
        <div className="grid grid-cols-1 gap-4 md:grid-cols-2 xl:grid-cols-3">
          {(templates.data ?? []).map((template) => (
            <Card
              key={template.key}
              title={template.name}
              extra={<Tag>{template.category}</Tag>}
              actions={[
                <Tooltip key="use" title={available ? undefined : '该功能未开通，请联系销售开通'}>
                  <Button
                    type="link"
                    disabled={!available}
                    loading={create.isPending && create.variables?.templateKey === template.key}
                    onClick={() => createFromTemplate(template)}
                  >
                    使用此模板
                  </Button>
                </Tooltip>,
              ]}
            >
              <p className="min-h-12 text-sm text-gray-700">{template.description}</p>
              <p className="mt-2 text-xs text-gray-500">用途：{ASSISTANT_USE_LABELS[template.use]}</p>
              {template.config.openingLine && (
                <p className="mt-2 line-clamp-2 text-xs text-gray-500">
                  开场白：{template.config.openingLine}
                </p>
              )}
            </Card>
          ))}
        </div>
      )}
    </main>
  );
}
