import {
  type AssistantDetail,
  type AssistantVariable,
  fillVariables,
  referencedVariables,
  VARIABLE_NAME_PATTERN,
} from '@callpilot/contracts';
import { Button, Input, Result, Skeleton, Space, Tag, Tooltip } from 'antd';
import type { TextAreaRef } from 'antd/es/input/TextArea';
import { useLayoutEffect, useRef, useState } from 'react';
import { useNavigate, useSearchParams } from 'react-router';
import { toast } from 'sonner';
import { useUnsavedChangesGuard } from '@/hooks/use-unsaved-changes-guard';
import { selectCurrentProjectId, useUserStore } from '@/stores/user-store';
import { useAssistant } from '../api/get-assistant';
import { useUpdateAssistant } from '../api/update-assistant';
import { insertAt, variableToken } from '../utils/assistant-format';

const MAX_PROMPT = 8000;

function PromptEditor({ assistant }: { assistant: AssistantDetail }) {
  const projectId = useUserStore(selectCurrentProjectId) ?? '';
  const navigate = useNavigate();
  const update = useUpdateAssistant(projectId);
  const [prompt, setPrompt] = useState(assistant.config.systemPrompt);
  const [variables, setVariables] = useState<AssistantVariable[]>(assistant.config.variables);
  const [newName, setNewName] = useState('');
  const [newNameError, setNewNameError] = useState<string | undefined>();
  const [caret, setCaret] = useState<number | null>(null);
  const textareaRef = useRef<TextAreaRef>(null);

  const dirty =
    prompt !== assistant.config.systemPrompt ||
    JSON.stringify(variables) !== JSON.stringify(assistant.config.variables);
  const guard = useUnsavedChangesGuard(dirty);

  // Put the caret after an inserted variable once React has written the new text.
  useLayoutEffect(() => {
    if (caret === null) return;
    const element = textareaRef.current?.resizableTextArea?.textArea;
    element?.focus();
    element?.setSelectionRange(caret, caret);
    setCaret(null);
  }, [caret]);

  const insert = (name: string) => {
    const element = textareaRef.current?.resizableTextArea?.textArea;
    const start = element?.selectionStart ?? prompt.length;
    const end = element?.selectionEnd ?? start;
    const next = insertAt(prompt, variableToken(name), start, end);
    setPrompt(next.value);
    setCaret(next.caret);
  };

  const addVariable = () => {
    const name = newName.trim();
    if (!VARIABLE_NAME_PATTERN.test(name)) {
      setNewNameError('变量名为 1-20 个汉字、字母、数字或下划线');
      return;
    }
    if (variables.some((variable) => variable.name === name)) {
      setNewNameError(`变量名重复：${name}`);
      return;
    }
    if (variables.length >= 20) {
      setNewNameError('变量最多 20 个');
      return;
    }
    setVariables((current) => [...current, { name, sample: '', required: false }]);
    setNewName('');
    setNewNameError(undefined);
  };

  const samples = Object.fromEntries(
    variables.map((variable) => [variable.name, variable.sample || `【${variable.name}】`]),
  );
  const undeclared = referencedVariables(prompt).filter((name) => !variables.some((v) => v.name === name));

  const save = async () => {
    try {
      await update.mutateAsync({
        id: assistant.id,
        body: {
          name: assistant.name,
          description: assistant.description,
          use: assistant.use,
          status: assistant.status,
          config: { ...assistant.config, systemPrompt: prompt, variables },
        },
      });
      toast.success('提示词已保存');
    } catch {
      // The request client has shown the server's message; the text stays for another try.
    }
  };

  const back = () => navigate(`/assistant/edit?id=${encodeURIComponent(assistant.id)}`);

  return (
    <main className="flex h-full flex-col gap-4 p-6">
      <header className="flex flex-wrap items-center justify-between gap-3">
        <div className="flex items-center gap-3">
          <h1 className="text-2xl font-semibold text-gray-900">编辑提示词</h1>
          <span className="text-sm text-gray-500">{assistant.name}</span>
          {dirty && <Tag color="gold">未保存</Tag>}
        </div>
        <Space>
          <Button onClick={back}>返回</Button>
          <Button type="primary" loading={update.isPending} disabled={!dirty} onClick={save}>
            保存
          </Button>
        </Space>
      </header>
      <div className="grid min-h-0 flex-1 grid-cols-1 gap-4 lg:grid-cols-[1fr_260px]">
        <div className="flex min-h-0 flex-col gap-4">
          <section className="flex flex-col gap-2 rounded-lg border border-gray-200 bg-white p-4">
            <div className="flex items-center justify-between">
              <h2 className="text-base font-semibold">提示词</h2>
              <span className={prompt.length > MAX_PROMPT ? 'text-sm text-red-500' : 'text-sm text-gray-500'}>
                {prompt.length} / {MAX_PROMPT} 字
              </span>
            </div>
            <Input.TextArea
              ref={textareaRef}
              aria-label="提示词"
              value={prompt}
              autoSize={{ minRows: 16, maxRows: 30 }}
              onChange={(event) => setPrompt(event.target.value)}
              status={prompt.length > MAX_PROMPT ? 'error' : undefined}
            />
            {prompt.length > MAX_PROMPT && (
              <span className="text-sm text-red-500">提示词不能超过 {MAX_PROMPT} 个字符</span>
            )}
          </section>
          <section
            aria-label="预览"
            className="flex flex-col gap-2 rounded-lg border border-gray-200 bg-white p-4"
          >
            <h2 className="text-base font-semibold">预览（填入示例值）</h2>
            <pre data-testid="prompt-preview" className="whitespace-pre-wrap font-sans text-sm text-gray-800">
              {fillVariables(prompt, samples) || '（空）'}
            </pre>
          </section>
        </div>
        <aside
          aria-label="变量"
          className="flex flex-col gap-3 rounded-lg border border-gray-200 bg-white p-4"
        >
          <h2 className="text-base font-semibold">变量</h2>
          <p className="text-xs text-gray-500">点击变量插入到光标处</p>
          <div className="flex flex-col gap-2">
            {variables.map((variable) => (
              <div key={variable.name} className="flex flex-col gap-1">
                <Button onClick={() => insert(variable.name)}>{variableToken(variable.name)}</Button>
                <Input
                  size="small"
                  aria-label={`${variable.name} 示例值`}
                  placeholder="示例值"
                  value={variable.sample}
                  onChange={(event) =>
                    setVariables((current) =>
                      current.map((item) =>
                        item.name === variable.name ? { ...item, sample: event.target.value } : item,
                      ),
                    )
                  }
                />
              </div>
            ))}
          </div>
          <div className="flex flex-col gap-1">
            <Space.Compact>
              <Input
                aria-label="新变量名"
                placeholder="新变量名"
                value={newName}
                status={newNameError ? 'error' : undefined}
                onChange={(event) => setNewName(event.target.value)}
                onPressEnter={addVariable}
              />
              <Button onClick={addVariable}>添加变量</Button>
            </Space.Compact>
            {newNameError && <span className="text-xs text-red-500">{newNameError}</span>}
          </div>
          {undeclared.length > 0 && (
            <Tooltip title="提示词中引用了未定义的变量，通话时不会被替换">
              <p className="text-xs text-orange-500">未定义的变量：{undeclared.join('、')}</p>
            </Tooltip>
          )}
        </aside>
      </div>
      {guard.prompt}
    </main>
  );
}

export function AssistantPromptEditPage() {
  const projectId = useUserStore(selectCurrentProjectId);
  const [searchParams] = useSearchParams();
  const id = searchParams.get('id') ?? undefined;
  const detail = useAssistant(projectId, id);

  if (!id) return <Result status="404" title="缺少小助手 ID" subTitle="请从小助手编辑页进入。" />;
  if (detail.isPending) return <Skeleton active className="p-6" />;
  if (!detail.data) return <Result status="404" title="小助手不存在或无权访问" />;
  return <PromptEditor key={detail.data.id} assistant={detail.data} />;
}
