import {
  type KnowledgeBase,
  type KnowledgeBaseWriteRequest,
  knowledgeBaseWriteRequest,
} from '@callpilot/contracts';
import { Form, Input, InputNumber, Modal } from 'antd';
import { useNavigate } from 'react-router';
import { toast } from 'sonner';
import { zodRule } from '@/lib/form-rules';
import { useCreateKnowledgeBase } from '../api/create-knowledge-base';
import { useUpdateKnowledgeBase } from '../api/update-knowledge-base';
import { knowledgeDetailPath } from '../utils/knowledge-paths';

const fields = knowledgeBaseWriteRequest.shape;

type FormValues = { name: string; description?: string; chunkSize: number; chunkOverlap: number };

// The contract's cross-field rule, which field-level schemas cannot see.
const OVERLAP_BELOW_SIZE = '分段重叠须小于分段长度';

export function KnowledgeBaseFormDialog({
  projectId,
  base,
  onClose,
}: {
  projectId: string;
  /** Absent when creating. */
  base?: KnowledgeBase;
  onClose: () => void;
}) {
  const [form] = Form.useForm<FormValues>();
  const navigate = useNavigate();
  const create = useCreateKnowledgeBase(projectId, {
    onSuccess: (created) => {
      toast.success('知识库已创建，现在可以上传文档');
      onClose();
      navigate(knowledgeDetailPath(created.id));
    },
  });
  const update = useUpdateKnowledgeBase(projectId, {
    onSuccess: () => {
      toast.success('知识库已保存');
      onClose();
    },
  });
  const saving = create.isPending || update.isPending;

  const submit = (values: FormValues) => {
    const body: KnowledgeBaseWriteRequest = {
      name: values.name.trim(),
      description: values.description?.trim() ?? '',
      chunkSize: values.chunkSize,
      chunkOverlap: values.chunkOverlap,
    };
    if (base) update.mutate({ knowledgeBaseId: base.id, body });
    else create.mutate(body);
  };

  return (
    <Modal
      open
      title={base ? '编辑知识库' : '新建知识库'}
      okText={base ? '保存' : '创建'}
      onOk={() => form.submit()}
      onCancel={onClose}
      confirmLoading={saving}
      destroyOnHidden
      mask={{ closable: false }}
    >
      <Form<FormValues>
        form={form}
        name="knowledge-base"
        layout="vertical"
        requiredMark={false}
        disabled={saving}
        initialValues={{
          name: base?.name ?? '',
          description: base?.description ?? '',
          chunkSize: base?.chunkSize ?? 500,
          chunkOverlap: base?.chunkOverlap ?? 50,
        }}
        onFinish={submit}
      >
        <Form.Item label="知识库名称" name="name" rules={[zodRule(fields.name)]}>
          <Input maxLength={50} placeholder="例如：售后常见问题" />
        </Form.Item>
        <Form.Item label="描述" name="description" rules={[zodRule(fields.description)]}>
          <Input.TextArea rows={3} maxLength={200} showCount placeholder="这个知识库包含哪些内容（选填）" />
        </Form.Item>
        <div className="grid grid-cols-2 gap-4">
          <Form.Item
            label="分段长度"
            name="chunkSize"
            rules={[zodRule(fields.chunkSize)]}
            extra="每段最多多少个字符（100-2000）"
          >
            <InputNumber className="w-full" min={1} precision={0} suffix="字符" />
          </Form.Item>
          <Form.Item
            label="分段重叠"
            name="chunkOverlap"
            dependencies={['chunkSize']}
            extra="相邻分段重复的字符数，避免答案被切断"
            rules={[
              zodRule(fields.chunkOverlap),
              ({ getFieldValue }) => ({
                validator: async (_, value: unknown) => {
                  const size = getFieldValue('chunkSize') as unknown;
                  if (typeof value === 'number' && typeof size === 'number' && value >= size) {
                    throw new Error(OVERLAP_BELOW_SIZE);
                  }
                },
              }),
            ]}
          >
            <InputNumber className="w-full" min={0} precision={0} suffix="字符" />
          </Form.Item>
        </div>
        {base && <p className="text-xs text-gray-500">分段设置对之后上传或重新解析的文档生效。</p>}
      </Form>
    </Modal>
  );
}
