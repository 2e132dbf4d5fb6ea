import {
  KNOWLEDGE_TERM_MAX_VARIANTS,
  type KnowledgeTerm,
  type KnowledgeTermWriteRequest,
  knowledgeTermWriteRequest,
} from '@callpilot/contracts';
import { Form, Input, Modal, Select } from 'antd';
import { toast } from 'sonner';
import { zodRule } from '@/lib/form-rules';
import { useSaveKnowledgeTerm } from '../api/save-knowledge-term';

const fields = knowledgeTermWriteRequest.shape;

type FormValues = { standard: string; variants: string[] };

export function KnowledgeTermFormDialog({
  projectId,
  term,
  onClose,
}: {
  projectId: string;
  /** Absent when adding. */
  term?: KnowledgeTerm;
  onClose: () => void;
}) {
  const [form] = Form.useForm<FormValues>();
  const save = useSaveKnowledgeTerm(projectId, {
    onSuccess: () => {
      toast.success(term ? '词条已保存' : '词条已添加');
      onClose();
    },
  });

  const submit = (values: FormValues) => {
    const body: KnowledgeTermWriteRequest = {
      standard: values.standard.trim(),
      variants: values.variants.map((v) => v.trim()).filter(Boolean),
    };
    save.mutate({ termId: term?.id, body });
  };

  return (
    <Modal
      open
      title={term ? '编辑词条' : '添加词条'}
      okText={term ? '保存' : '添加'}
      onOk={() => form.submit()}
      onCancel={onClose}
      confirmLoading={save.isPending}
      destroyOnHidden
      mask={{ closable: false }}
    >
      <Form<FormValues>
        form={form}
        name="knowledge-term"
        layout="vertical"
        requiredMark={false}
        disabled={save.isPending}
        initialValues={{ standard: term?.standard ?? '', variants: term?.variants ?? [] }}
        onFinish={submit}
      >
        <Form.Item
          label="标准词"
          name="standard"
          rules={[zodRule(fields.standard)]}
          extra="知识库里使用的说法，如“光猫”"
        >
          <Input maxLength={20} placeholder="例如：光猫" />
        </Form.Item>
        <Form.Item
          label="口语说法"
          name="variants"
          dependencies={['standard']}
          rules={[
            zodRule(fields.variants),
            ({ getFieldValue }) => ({
              validator: async (_, value: string[] | undefined) => {
                const standard = String(getFieldValue('standard') ?? '').trim();
                if (standard && (value ?? []).some((v) => v.trim() === standard)) {
                  throw new Error('口语说法不能与标准词相同');
                }
              },
            }),
          ]}
          extra={`来电者常说的其他叫法，输入后回车，最多 ${KNOWLEDGE_TERM_MAX_VARIANTS} 个`}
        >
          <Select
            mode="tags"
            open={false}
            suffixIcon={null}
            tokenSeparators={['|', '｜', '、', ',', '，']}
            placeholder="例如：猫、猫子、调制解调器"
          />
        </Form.Item>
      </Form>
    </Modal>
  );
}
