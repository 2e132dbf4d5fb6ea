import { Table, type TableColumnsType, Tag } from 'antd';
import type { SchemaField } from '../utils/json-schema';

const columns: TableColumnsType<SchemaField> = [
  {
    title: '字段',
    dataIndex: 'name',
    render: (name: string, field) => (
      <span className="whitespace-nowrap font-mono text-xs">
        {name}
        {field.required && <span className="ml-1 text-[#FF5656]">*</span>}
      </span>
    ),
  },
  {
    title: '类型',
    dataIndex: 'type',
    render: (type: string) => <span className="font-mono text-xs text-[#4D8EFF]">{type}</span>,
  },
  {
    title: '说明',
    key: 'description',
    render: (_, field) => (
      <span className="text-sm">
        {field.description || <span className="text-gray-400">-</span>}
        {field.hints.map((hint) => (
          <Tag key={hint} className="!ml-2 !text-xs">
            {hint}
          </Tag>
        ))}
      </span>
    ),
  },
];

/** Fields of a schema as a table: name (* when required), type, description and rules. */
export function DeveloperFieldTable({ fields, label }: { fields: SchemaField[]; label: string }) {
  return (
    <Table<SchemaField>
      aria-label={label}
      rowKey="name"
      size="small"
      columns={columns}
      dataSource={fields}
      pagination={false}
      locale={{ emptyText: '无字段' }}
    />
  );
}
