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
import { type ReactNode, useState } from 'react';
import { zodRule } from '@/lib/form-rules';
import { RequestError } from '@/lib/request';
import { useUserStore } from '@/stores/user-store';

// What the project's provider profiles (模型配置, 语音识别配置, 语音合成配置) share in the console: a
// list with 测试 / 编辑 / 删除 (in a drawer, or on the 语音配置 page), and a form whose key is write-only.

/** The fields every profile shows: an endpoint, a model, and whether a key is stored. */
export interface ProviderProfile {
  id: string;
  name: string;
  baseUrl: string;
  model: string;
  hasApiKey: boolean;
  apiKeyHint: string;
}

export interface ProfileTestResult {
  ok: boolean;
  latencyMs: number;
  message: string;
}

export type ProfileEditing<T> = 'new' | T;

/** A feature's save mutation for one kind of profile (creates without `id`, updates with it). */
interface ProfileSave<V> {
  isPending: boolean;
  mutateAsync: (request: { body: V; id?: string }) => Promise<unknown>;
}

/** The form around a profile's fields, with 保存 / 取消; the key starts empty (write-only). */
export function ProviderProfileForm<V extends object>({
  name,
  addTitle,
  editing,
  initialValues,
  save,
  onDone,
  ownKeyField = false,
  children,
}: {
  /** Prefixes the fields' ids: the drawer opens over the assistant editor, whose form has a 名称 too. */
  name: string;
  addTitle: string;
  editing: ProfileEditing<ProviderProfile>;
  initialValues: Omit<V, 'apiKey'>;
  save: ProfileSave<V>;
  onDone: () => void;
  /** The children render the key field themselves (ProviderKeyFields), labelled their own way. */
  ownKeyField?: boolean;
  children: ReactNode;
}) {
  const existing = editing === 'new' ? undefined : editing;
  return (
    <Form<V>
      name={name}
      layout="vertical"
      className="rounded-md border border-gray-200 p-4"
      initialValues={{ ...initialValues, apiKey: '' }}
      onFinish={async (values) => {
        try {
          await save.mutateAsync({ body: values, ...(existing ? { id: existing.id } : {}) });
          onDone();
        } catch {
          // The request client has shown the server's message; the form stays for a correction.
        }
      }}
    >
      <Typography.Title level={5}>{existing ? `编辑「${existing.name}」` : addTitle}</Typography.Title>
      {children}
      {!ownKeyField && <ProviderKeyFields existing={existing} />}
      <Space>
        <Button type="primary" htmlType="submit" loading={save.isPending}>
          保存
        </Button>
        <Button onClick={onDone}>取消</Button>
      </Space>
    </Form>
  );
}

/**
 * The key field: write-only, so an edit shows only its last 4 characters and may keep or clear it.
 * `existing` is the stored profile whose key would be kept (none: the field starts from nothing).
 */
export function ProviderKeyFields({
  existing,
  label = 'API Key',
  help = '仅保存在服务器，不会再显示',
  required = false,
  clearHint = '如本地部署等无需密钥的接口',
}: {
  existing: Pick<ProviderProfile, 'hasApiKey' | 'apiKeyHint'> | undefined;
  label?: string;
  /** Shown while no key is stored. */
  help?: string;
  /** The vendor cannot work without it: no clearing, and a new profile must have one. */
  required?: boolean;
  clearHint?: string;
}) {
  const kept = existing?.hasApiKey === true;
  return (
    <>
      <Form.Item
        label={label}
        name="apiKey"
        extra={kept ? `已保存（…${existing.apiKeyHint}），留空则保持不变` : help}
        rules={required && !kept ? [{ required: true, whitespace: true, message: `请输入${label}` }] : []}
      >
        <Input.Password autoComplete="new-password" placeholder={kept ? '留空保持不变' : ''} />
      </Form.Item>
      {kept && !required && (
        <Form.Item name="clearApiKey" valuePropName="checked">
          <Checkbox>{`清除已保存的${label}（${clearHint}）`}</Checkbox>
        </Form.Item>
      )}
    </>
  );
}

/** Name, base URL and model, validated by the contract's own schemas. */
type FieldSchema = Parameters<typeof zodRule>[0];

export function ProviderEndpointFields({
  schema,
  namePlaceholder,
  baseUrlHint,
  modelLabel,
  modelPlaceholder,
}: {
  /** The write request's field schemas (its `shape`). */
  schema: { name: FieldSchema; baseUrl: FieldSchema; model: FieldSchema };
  namePlaceholder: string;
  baseUrlHint: string;
  modelLabel: string;
  modelPlaceholder: string;
}) {
  return (
    <>
      <Form.Item label="配置名称" name="name" rules={[zodRule(schema.name)]}>
        <Input placeholder={namePlaceholder} />
      </Form.Item>
      <Form.Item label="接口地址" name="baseUrl" extra={baseUrlHint} rules={[zodRule(schema.baseUrl)]}>
        <Input placeholder="https://" />
      </Form.Item>
      <Form.Item label={modelLabel} name="model" rules={[zodRule(schema.model)]}>
        <Input placeholder={modelPlaceholder} />
      </Form.Item>
    </>
  );
}

/** A profile list's test: the feature's mutation (takes a profile id). */
export interface ProfileTest<R> {
  mutateAsync: (id: string) => Promise<R>;
  isPending: boolean;
  variables: string | undefined;
}

/** What a profile list shows and does, shared by the drawers and the 语音配置 page. */
export interface ProfileListProps<T extends ProviderProfile, R extends ProfileTestResult> {
  /** 语音识别配置: the members' notice names it. */
  title: string;
  emptyText: string;
  testLabel: string;
  deleteWarning: string;
  /** The feature's list query, and its test and delete mutations (each takes a profile id). */
  profiles: { data: T[] | undefined; isPending: boolean };
  test: ProfileTest<R>;
  remove: { mutateAsync: (id: string) => Promise<unknown> };
  resultText: (result: R) => string;
  /** The whole result (default: an alert with `resultText`), e.g. with the audio it produced. */
  renderResult?: (result: R) => ReactNode;
  /** The line under a profile's name: where it points (default: address · model). */
  describe?: (profile: T) => ReactNode;
  /** What the profile's secret is called (default API Key). */
  keyLabel?: (profile: T) => string;
  /**
   * More actions beside 测试 (an uploaded recording's test): `run` shows its result, or its
   * failure, where the test's would be.
   */
  extraActions?: (profile: T, run: (work: () => Promise<R>) => void) => ReactNode;
  onEdit: (profile: T) => void;
}

/** Profiles hold paid keys: members may read and test them, the server refuses their writes. */
export const useCanManageProfiles = () => useUserStore((state) => state.userInfo.isOwnerOrAdmin);

/** The profiles with 测试 / 编辑 / 删除; a test's result, failed or not, stays beside its profile. */
export function ProviderProfileList<T extends ProviderProfile, R extends ProfileTestResult>({
  emptyText,
  testLabel,
  deleteWarning,
  profiles,
  test,
  remove,
  resultText,
  renderResult,
  describe = (profile) => `${profile.baseUrl} · ${profile.model}`,
  keyLabel = () => 'API Key',
  extraActions,
  onEdit,
}: ProfileListProps<T, R>) {
  const [results, setResults] = useState<Record<string, R | string>>({});
  const canManage = useCanManageProfiles();

  const run = async (id: string, work: () => Promise<R>) => {
    setResults(({ [id]: _, ...rest }) => rest);
    try {
      const result = await work();
      setResults((previous) => ({ ...previous, [id]: result }));
    } catch (error) {
      const message = error instanceof RequestError ? error.message : '测试失败';
      setResults((previous) => ({ ...previous, [id]: message }));
    }
  };

  return (
    <>
      {profiles.isPending && <Skeleton active />}
      {profiles.data?.length === 0 && <Empty description={emptyText} />}
      <ul className="flex flex-col divide-y divide-gray-100">
        {(profiles.data ?? []).map((profile) => {
          const result = results[profile.id];
          return (
            <li key={profile.id} className="py-3">
              <div className="flex w-full flex-col gap-2">
                <div className="flex items-start justify-between gap-2">
                  <div className="flex flex-col">
                    <span className="font-medium">{profile.name}</span>
                    <span className="text-xs text-gray-500">{describe(profile)}</span>
                    <span className="text-xs text-gray-500">
                      {keyLabel(profile)}：{profile.hasApiKey ? `已保存（…${profile.apiKeyHint}）` : '未设置'}
                    </span>
                  </div>
                  <Space size={0} wrap>
                    <Button
                      type="link"
                      size="small"
                      loading={test.isPending && test.variables === profile.id}
                      onClick={() => run(profile.id, () => test.mutateAsync(profile.id))}
                    >
                      {testLabel}
                    </Button>
                    {extraActions?.(profile, (work) => void run(profile.id, work))}
                    {canManage && (
                      <Button type="link" size="small" onClick={() => onEdit(profile)}>
                        编辑
                      </Button>
                    )}
                    {canManage && (
                      <Popconfirm
                        title={`删除「${profile.name}」？`}
                        description={deleteWarning}
                        okText="删除"
                        cancelText="取消"
                        okButtonProps={{ danger: true }}
                        onConfirm={() => remove.mutateAsync(profile.id).catch(() => undefined)}
                      >
                        <Button type="link" size="small" danger>
                          删除
                        </Button>
                      </Popconfirm>
                    )}
                  </Space>
                </div>
                {result !== undefined &&
                  (typeof result === 'string' ? (
                    <Alert type="error" showIcon title={result} />
                  ) : renderResult ? (
                    renderResult(result)
                  ) : (
                    <Alert type={result.ok ? 'success' : 'error'} showIcon title={resultText(result)} />
                  ))}
              </div>
            </li>
          );
        })}
      </ul>
    </>
  );
}

/** The members' notice: what they may do with profiles they cannot change. */
export function ProfileReadOnlyNotice({ title }: { title: string }) {
  return (
    <Alert
      type="info"
      showIcon
      title={`仅项目所有者或管理员可以添加、编辑或删除${title}；你可以查看并测试。`}
    />
  );
}

/**
 * The drawer of one kind of profile (模型配置, and 语音识别配置 from the assistant editor): the
 * list, and the form to add or edit one above it.
 */
export function ProviderProfileDrawer<T extends ProviderProfile, R extends ProfileTestResult>({
  intro,
  addLabel,
  open,
  onClose,
  renderForm,
  ...list
}: Omit<ProfileListProps<T, R>, 'onEdit'> & {
  intro: ReactNode;
  addLabel: string;
  open: boolean;
  onClose: () => void;
  renderForm: (editing: ProfileEditing<T>, onDone: () => void) => ReactNode;
}) {
  const [editing, setEditing] = useState<ProfileEditing<T> | null>(null);
  const canManage = useCanManageProfiles();

  return (
    <Drawer title={list.title} open={open} onClose={onClose} size={520} destroyOnHidden>
      <div className="flex flex-col gap-4">
        <p className="text-sm text-gray-500">{intro}</p>
        {!canManage ? (
          <ProfileReadOnlyNotice title={list.title} />
        ) : editing ? (
          <div key={editing === 'new' ? 'new' : editing.id}>
            {renderForm(editing, () => setEditing(null))}
          </div>
        ) : (
          <Button type="dashed" onClick={() => setEditing('new')}>
            {addLabel}
          </Button>
        )}
        <ProviderProfileList<T, R> {...list} onEdit={setEditing} />
      </div>
    </Drawer>
  );
}

/**
 * One kind of profile on a page (语音配置): the list, with the form to add or edit one in a drawer.
 */
export function ProviderProfilePanel<T extends ProviderProfile, R extends ProfileTestResult>({
  intro,
  addLabel,
  renderForm,
  ...list
}: Omit<ProfileListProps<T, R>, 'onEdit'> & {
  intro: ReactNode;
  addLabel: string;
  renderForm: (editing: ProfileEditing<T>, onDone: () => void) => ReactNode;
}) {
  const [editing, setEditing] = useState<ProfileEditing<T> | null>(null);
  const canManage = useCanManageProfiles();
  const close = () => setEditing(null);

  return (
    <section className="flex flex-col gap-3 rounded-lg border border-gray-200 bg-white p-4">
      <div className="flex items-start justify-between gap-3">
        <p className="text-sm text-gray-500">{intro}</p>
        {canManage && (
          <Button type="primary" onClick={() => setEditing('new')}>
            {addLabel}
          </Button>
        )}
      </div>
      {!canManage && <ProfileReadOnlyNotice title={list.title} />}
      <ProviderProfileList<T, R> {...list} onEdit={setEditing} />
      <Drawer title={list.title} open={editing !== null} onClose={close} size={520} destroyOnHidden>
        {editing && <div key={editing === 'new' ? 'new' : editing.id}>{renderForm(editing, close)}</div>}
      </Drawer>
    </section>
  );
}
