import { type LlmProviderWriteRequest, llmProviderWriteRequest } from '@callpilot/contracts';
import { Form, Input } from 'antd';
import { selectCurrentProjectId, useUserStore } from '@/stores/user-store';
import { useDeleteLlmProvider } from '../api/delete-llm-provider';
import { useLlmProviders } from '../api/get-llm-providers';
import { useSaveLlmProvider } from '../api/save-llm-provider';
import { useTestLlmProvider } from '../api/test-llm-provider';
import {
  ProviderEndpointFields,
  ProviderProfileDrawer,
  ProviderProfileForm,
} from './assistant-provider-profiles';

/** The project's OpenAI-compatible model profiles; assistants without one run the script brain. */
export function AssistantLlmProviderDrawer({ open, onClose }: { open: boolean; onClose: () => void }) {
  const projectId = useUserStore(selectCurrentProjectId);
  const providers = useLlmProviders(open ? projectId : undefined);
  const save = useSaveLlmProvider(projectId ?? '');
  const test = useTestLlmProvider(projectId ?? '');
  const remove = useDeleteLlmProvider(projectId ?? '');

  return (
    <ProviderProfileDrawer
      title="模型配置"
      intro="配置 OpenAI 兼容的大模型接口（DeepSeek、通义千问、Moonshot、Ollama 等）。未选择模型配置的小助手使用离线脚本模式。"
      emptyText="暂无模型配置，小助手将使用离线脚本模式"
      addLabel="添加模型配置"
      testLabel="测试连接"
      deleteWarning="使用它的小助手将改用离线脚本模式。"
      open={open}
      onClose={onClose}
      profiles={providers}
      test={test}
      remove={remove}
      resultText={(result) =>
        result.ok ? `连接成功，耗时 ${result.latencyMs} ms` : `连接失败：${result.message}`
      }
      renderForm={(editing, onDone) => (
        <ProviderProfileForm<LlmProviderWriteRequest>
          name="llm-provider"
          addTitle="添加模型配置"
          editing={editing}
          initialValues={{
            name: editing === 'new' ? '' : editing.name,
            baseUrl: editing === 'new' ? '' : editing.baseUrl,
            model: editing === 'new' ? '' : editing.model,
            embeddingModel: editing === 'new' ? '' : editing.embeddingModel,
          }}
          save={save}
          onDone={onDone}
        >
          <ProviderEndpointFields
            schema={llmProviderWriteRequest.shape}
            namePlaceholder="如：DeepSeek"
            baseUrlHint="OpenAI 兼容接口，如 https://api.deepseek.com/v1"
            modelLabel="默认模型"
            modelPlaceholder="如：deepseek-chat"
          />
          <Form.Item label="向量模型（可选）" name="embeddingModel" extra="用于知识库混合检索">
            <Input />
          </Form.Item>
        </ProviderProfileForm>
      )}
    />
  );
}
