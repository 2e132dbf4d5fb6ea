import { WEBHOOK_EVENT_CATALOGUE, type WebhookEventType } from '@callpilot/contracts';
import { Checkbox } from 'antd';
import { AVAILABLE_EVENT_TYPES, WEBHOOK_EVENT_GROUPS } from '../utils/webhook-fields';

export const UNAVAILABLE_EVENT_TEXT = '尚未提供';

/**
 * 订阅事件: checkboxes grouped by what they are about, each with what it means. A form control:
 * `value` and `onChange` come from the Form.Item around it.
 */
export function WebhookEventPicker({
  value = [],
  onChange,
  disabled,
}: {
  value?: WebhookEventType[];
  onChange?: (events: WebhookEventType[]) => void;
  disabled?: boolean;
}) {
  const chosen = new Set(value);
  const allChosen = AVAILABLE_EVENT_TYPES.every((type) => chosen.has(type));
  const toggle = (type: WebhookEventType, on: boolean) => {
    const next = new Set(chosen);
    if (on) next.add(type);
    else next.delete(type);
    // Kept in the catalogue's order, whatever order they were ticked in.
    onChange?.(AVAILABLE_EVENT_TYPES.filter((candidate) => next.has(candidate)));
  };
  return (
    <div className="flex flex-col gap-3">
      <Checkbox
        checked={allChosen}
        indeterminate={!allChosen && chosen.size > 0}
        disabled={disabled}
        onChange={(event) => onChange?.(event.target.checked ? [...AVAILABLE_EVENT_TYPES] : [])}
      >
        全选
      </Checkbox>
      {WEBHOOK_EVENT_GROUPS.map((group) => (
        <fieldset key={group.label} className="m-0 rounded-md border border-gray-200 px-3 pb-2 pt-1">
          <legend className="px-1 text-sm font-medium text-gray-700">{group.label}</legend>
          <div className="flex flex-col gap-1.5">
            {group.types.map((type) => {
              const entry = WEBHOOK_EVENT_CATALOGUE[type];
              return (
                <Checkbox
                  key={type}
                  checked={chosen.has(type)}
                  disabled={disabled || !entry.available}
                  onChange={(event) => toggle(type, event.target.checked)}
                >
                  <span className="font-medium">{entry.label}</span>
                  <span className="ml-2 font-mono text-xs text-gray-500">{type}</span>
                  <span className="block text-xs text-gray-500">
                    {entry.available ? entry.description : UNAVAILABLE_EVENT_TEXT}
                  </span>
                </Checkbox>
              );
            })}
          </div>
        </fieldset>
      ))}
    </div>
  );
}
