import {
  type LlmProvider,
  type LlmProviderWriteRequest,
  llmProviderWriteRequest,
} from '@callpilot/contracts';
import {
  Alert,
  Button,
  Checkbox,
  Drawer,
  Empty,
  Form,
  Input,
  Popconfirm,
  Skeleton,
  Space,
  Typography,
} from 'antd';
import { useState } from 'react';
import { zodRule } from '@/lib/form-rules';
import { RequestError } from '@/lib/request';
import { selectCurrentProjectId, useUserStore } from '@/stores/user-store';
import { useDeleteLlmProvider } from '../api/delete-llm-provider';
import { useLlmProviders } from '../api/get-llm-providers';
import { useSaveLlmProvider } from '../api/save-llm-provider';
import { type LlmProviderTestResult, useTestLlmProvider } from '../api/test-llm-provider';

const fields = llmProviderWriteRequest.shape;

type Editing = null | 'new' | LlmProvider;

function LlmProviderForm({ editing, onDone }: { editing: 'new' | LlmProvider; onDone: () => void }) {
  const projectId = useUserStore(selectCurrentProjectId) ?? '';
  const save = useSaveLlmProvider(projectId);
  const existing = editing === 'new' ? undefined : editing;
  const [form] = Form.useForm<LlmProviderWriteRequest>();

  return (
    <Form<LlmProviderWriteRequest>
      form={form}
      layout="vertical"
      className="rounded-md border border-gray-200 p-4"
      initialValues={{
        name: existing?.name ?? '',
        baseUrl: existing?.baseUrl ?? '',
        model: existing?.model ?? '',
        embeddingModel: existing?.embeddingModel ?? '',
        apiKey: '',
      }}
      onFinish={async (values) => {
        await save.mutateAsync({ body: values, ...(existing ? { id: existing.id } : {}) });
        onDone();
      }}
    >
      <Typography.Title level={5}>{existing ? `编辑「${existing.name}」` : '添加模型配置'}</Typography.Title>
      <Form.Item label="配置名称" name="name" rules={[zodRule(fields.name)]}>
        <Input placeholder="如：DeepSeek" />
      </Form.Item>
      <Form.Item
        label="接口地址"
        name="baseUrl"
        extra="OpenAI 兼容接口，如 https://api.deepseek.com/v1"
        rules={[zodRule(fields.baseUrl)]}
      >
        <Input placeholder="https://" />
      </Form.Item>
      <Form.Item label="默认模型" name="model" rules={[zodRule(fields.model)]}>
        <Input placeholder="如：deepseek-chat" />
      </Form.Item>
      <Form.Item
        label="API Key"
        name="apiKey"
        extra={
          existing?.hasApiKey
            ? `已保存（…${existing.apiKeyHint}），留空则保持不变`
            : '仅保存在服务器，不会再显示'
        }
      >
        <Input.Password autoComplete="new-password" placeholder={existing?.hasApiKey ? '留空保持不变' : ''} />
      </Form.Item>
      {existing?.hasApiKey && (
        <Form.Item name="clearApiKey" valuePropName="checked">
          <Checkbox>清除已保存的 API Key（如本地 Ollama 等无需密钥的接口）</Checkbox>
        </Form.Item>
      )}
      <Form.Item label="向量模型（可选）" name="embeddingModel" extra="用于知识库混合检索">
        <Input />
      </Form.Item>
      <Space>
        <Button type="primary" htmlType="submit" loading={save.isPending}>
          保存
        </Button>
        <Button onClick={onDone}>取消</Button>
      </Space>
    </Form>
  );
}

function TestResult({ result }: { result: LlmProviderTestResult | string }) {
  if (typeof result === 'string') return <Alert type="error" showIcon title={result} />;
  return result.ok ? (
    <Alert type="success" showIcon title={`连接成功，耗时 ${result.latencyMs} ms`} />
  ) : (
    <Alert type="error" showIcon title={`连接失败：${result.message}`} />
  );
}

/** The project's OpenAI-compatible model profiles; assistants without one run the script brain. */
export function AssistantLlmProviderDrawer({ open, onClose }: { open: boolean; onClose: () => void }) {
  const projectId = useUserStore(selectCurrentProjectId);
  const providers = useLlmProviders(open ? projectId : undefined);
  const remove = useDeleteLlmProvider(projectId ?? '');
  const test = useTestLlmProvider(projectId ?? '');
  const [editing, setEditing] = useState<Editing>(null);
  const [results, setResults] = useState<Record<string, LlmProviderTestResult | string>>({});

  const runTest = async (id: string) => {
    setResults(({ [id]: _, ...rest }) => rest);
    try {
      const result = await test.mutateAsync(id);
      setResults((previous) => ({ ...previous, [id]: result }));
    } catch (error) {
      const message = error instanceof RequestError ? error.message : '测试失败';
      setResults((previous) => ({ ...previous, [id]: message }));
    }
  };

  return (
    <Drawer title="模型配置" open={open} onClose={onClose} size={520} destroyOnHidden>
      <div className="flex flex-col gap-4">
        <p className="text-sm text-gray-500">
          配置 OpenAI 兼容的大模型接口（DeepSeek、通义千问、Moonshot、Ollama
          等）。未选择模型配置的小助手使用离线脚本模式。
        </p>
        {editing ? (
          <LlmProviderForm
            key={editing === 'new' ? 'new' : editing.id}
            editing={editing}
            onDone={() => setEditing(null)}
          />
        ) : (
          <Button type="dashed" onClick={() => setEditing('new')}>
            添加模型配置
          </Button>
        )}
        {providers.isPending && <Skeleton active />}
        {providers.data?.length === 0 && <Empty description="暂无模型配置，小助手将使用离线脚本模式" />}
        <ul className="flex flex-col divide-y divide-gray-100">
          {(providers.data ?? []).map((provider) => {
            const result = results[provider.id];
            return (
              <li key={provider.id} className="py-3">
                <div className="flex w-full flex-col gap-2">
                  <div className="flex items-start justify-between gap-2">
                    <div className="flex flex-col">
                      <span className="font-medium">{provider.name}</span>
                      <span className="text-xs text-gray-500">
                        {provider.baseUrl} · {provider.model}
                      </span>
                      <span className="text-xs text-gray-500">
                        API Key：{provider.hasApiKey ? `已保存（…${provider.apiKeyHint}）` : '未设置'}
                      </span>
                    </div>
                    <Space size={0}>
                      <Button
                        type="link"
                        size="small"
                        loading={test.isPending && test.variables === provider.id}
                        onClick={() => runTest(provider.id)}
                      >
                        测试连接
                      </Button>
                      <Button type="link" size="small" onClick={() => setEditing(provider)}>
                        编辑
                      </Button>
                      <Popconfirm
                        title={`删除「${provider.name}」？`}
                        description="使用它的小助手将改用离线脚本模式。"
                        okText="删除"
                        cancelText="取消"
                        okButtonProps={{ danger: true }}
                        onConfirm={() => remove.mutateAsync(provider.id).catch(() => undefined)}
                      >
                        <Button type="link" size="small" danger>
                          删除
                        </Button>
                      </Popconfirm>
                    </Space>
                  </div>
                  {result !== undefined && <TestResult result={result} />}
                </div>
              </li>
            );
          })}
        </ul>
      </div>
    </Drawer>
  );
}
