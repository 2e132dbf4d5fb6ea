import { WEBHOOK_EVENT_CATALOGUE, type WebhookEventType } from '@callpilot/contracts';
import { Collapse, Tag } from 'antd';
import { useMemo } from 'react';
import { WEBHOOK_EVENT_GROUPS, webhookEventFields, webhookEventSample } from '../utils/webhook-fields';
import { DeveloperCodeBlock } from './developer-code-block';
import { DeveloperFieldTable } from './developer-field-table';
import { UNAVAILABLE_EVENT_TEXT } from './webhook-event-picker';

function EventDetail({ type }: { type: WebhookEventType }) {
  const fields = useMemo(() => webhookEventFields(type), [type]);
  return (
    <div className="flex flex-col gap-4">
      <p className="m-0 text-sm text-gray-600">{WEBHOOK_EVENT_CATALOGUE[type].description}</p>
      <div className="grid gap-4 xl:grid-cols-2">
        <section>
          <h4 className="mb-2 text-sm font-semibold text-gray-800">data 字段</h4>
          <DeveloperFieldTable fields={fields} label={`${type} 字段`} />
        </section>
        <section>
          <h4 className="mb-2 text-sm font-semibold text-gray-800">示例负载</h4>
          <DeveloperCodeBlock
            code={JSON.stringify(webhookEventSample(type), null, 2)}
            label={`${type} 示例负载`}
            maxHeight={560}
          />
        </section>
      </div>
    </div>
  );
}

/**
 * 事件目录: every event a receiver can get, with what it means, the fields of its `data` (from
 * the contracts' schema) and a sample body.
 */
export function WebhookEventCatalogue() {
  return (
    <div className="flex flex-col gap-4">
      <p className="m-0 text-sm text-gray-600">
        每个事件的请求体都是 <code className="font-mono">{'{ type, timestamp, data }'}</code>：
        <code className="font-mono">type</code> 为事件类型，<code className="font-mono">timestamp</code>{' '}
        为事件发生时间（ISO 8601），<code className="font-mono">data</code>{' '}
        的字段见下。以后可能增加字段，请忽略不认识的字段。
      </p>
      {WEBHOOK_EVENT_GROUPS.map((group) => (
        <section key={group.label}>
          <h3 className="mb-2 text-base font-semibold text-gray-900">{group.label}</h3>
          <Collapse
            items={group.types.map((type) => ({
              key: type,
              label: (
                <span className="flex flex-wrap items-center gap-2">
                  <span className="font-medium">{WEBHOOK_EVENT_CATALOGUE[type].label}</span>
                  <span className="font-mono text-xs text-gray-500">{type}</span>
                  {!WEBHOOK_EVENT_CATALOGUE[type].available && <Tag>{UNAVAILABLE_EVENT_TEXT}</Tag>}
                </span>
              ),
              children: <EventDetail type={type} />,
            }))}
          />
        </section>
      ))}
    </div>
  );
}
