import {
  API_KEY_RESOURCE_LABELS,
  type ApiKeyAccess,
  type ApiKeyResource,
  type ApiKeyScopes,
  apiKeyResource,
  READ_ONLY_API_KEY_RESOURCES,
} from '@callpilot/contracts';
import { Button, Radio } from 'antd';
import { ACCESS_LABELS } from '../utils/api-key-format';

const isReadOnly = (resource: ApiKeyResource) => READ_ONLY_API_KEY_RESOURCES.includes(resource);

const accessOptions = (resource: ApiKeyResource) =>
  (['none', 'read', 'write'] as const)
    .filter((access) => access !== 'write' || !isReadOnly(resource))
    .map((access) => ({ value: access, label: ACCESS_LABELS[access] }));

/** Every resource at `access` (read-only resources at most 只读). */
export function allScopes(access: 'read' | 'write'): ApiKeyScopes {
  return Object.fromEntries(
    apiKeyResource.options.map((resource) => [resource, isReadOnly(resource) ? 'read' : access]),
  );
}

/**
 * 权限: one row per resource of the open API, 无 / 只读 / 读写 each ('读写' includes reading).
 * A form control: `value` and `onChange` come from the Form.Item around it.
 */
export function ApiKeyScopeMatrix({
  value = {},
  onChange,
  disabled,
}: {
  value?: ApiKeyScopes;
  onChange?: (scopes: ApiKeyScopes) => void;
  disabled?: boolean;
}) {
  const set = (resource: ApiKeyResource, access: ApiKeyAccess) =>
    onChange?.({ ...value, [resource]: access });
  return (
    <div className="flex flex-col gap-2">
      <div className="flex gap-2">
        <Button size="small" disabled={disabled} onClick={() => onChange?.(allScopes('read'))}>
          全部只读
        </Button>
        <Button size="small" disabled={disabled} onClick={() => onChange?.(allScopes('write'))}>
          全部读写
        </Button>
        <Button size="small" type="text" disabled={disabled} onClick={() => onChange?.({})}>
          清空
        </Button>
      </div>
      <div className="divide-y divide-gray-100 rounded-md border border-gray-200">
        {apiKeyResource.options.map((resource) => (
          <div key={resource} className="flex items-center justify-between gap-4 px-3 py-1.5">
            <span className="text-sm text-gray-800">
              {API_KEY_RESOURCE_LABELS[resource]}
              {isReadOnly(resource) && <span className="ml-1 text-xs text-gray-400">（仅可只读）</span>}
            </span>
            <Radio.Group
              aria-label={API_KEY_RESOURCE_LABELS[resource]}
              size="small"
              optionType="button"
              disabled={disabled}
              value={value[resource] ?? 'none'}
              options={accessOptions(resource)}
              onChange={(event) => set(resource, event.target.value as ApiKeyAccess)}
            />
          </div>
        ))}
      </div>
    </div>
  );
}
