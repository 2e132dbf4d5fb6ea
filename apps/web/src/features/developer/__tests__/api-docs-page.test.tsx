import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import { afterEach, describe, expect, it } from 'vitest';
import { opendockClient } from '@/lib/request';
import { type FakeReply, startFakeServer } from '@/test/fake-server';
import { renderApp } from '@/test/render-route';
import { serveConsole } from './developer-fixtures';
import { OPENAPI_FIXTURE } from './openapi-fixture';

let consoleServer: ReturnType<typeof serveConsole> | undefined;
let opendock: ReturnType<typeof startFakeServer> | undefined;
afterEach(() => {
  consoleServer?.stop();
  opendock?.stop();
  consoleServer = undefined;
  opendock = undefined;
});

/** The open API's document, served raw (not in the envelope) as swagger serves it. */
function serveDocument(reply: () => FakeReply) {
  consoleServer = serveConsole('owner', {});
  opendock = startFakeServer(
    (request) => (request.url === '/v1/openapi.json' ? reply() : { status: 404, body: {} }),
    opendockClient.http,
  );
}

// biome-ignore lint/suspicious/noTemplateCurlyInString: the Node sample's own template literal, as the user copies it.
const NODE_AUTH_HEADER = '    Authorization: `Bearer ${process.env.CALLPILOT_API_KEY}`,';

const sampleOf = (label: string) =>
  screen.getByRole('figure', { name: label }).querySelector('code')?.textContent ?? '';

/** Opens a code-sample tab and returns the sample it shows. */
async function sample(tab: 'curl' | 'Node' | 'Python') {
  fireEvent.click(screen.getByRole('tab', { name: tab }));
  await screen.findByRole('figure', { name: `${tab} 示例` });
  return sampleOf(`${tab} 示例`);
}

describe('API 文档', () => {
  it('lists the operations by tag from the document, read without the console’s token, and filters them', async () => {
    serveDocument(() => ({ status: 200, body: OPENAPI_FIXTURE }));
    renderApp('/developer-options/docs');
    const nav = await screen.findByRole('navigation', { name: '接口列表' }, { timeout: 15_000 });
    for (const tag of ['开放接口 · 通话', '开放接口 · 免打扰名单', '开放接口 · 密钥']) {
      expect(within(nav).getByText(tag)).toBeTruthy();
    }
    expect(within(nav).getAllByRole('button', { name: /\/opendock/ })).toHaveLength(5);
    expect(screen.getByText('版本 1.4.0')).toBeTruthy();
    expect(screen.getByRole('link', { name: '在线调试（Swagger）' }).getAttribute('href')).toBe('/docs');

    const request = opendock?.requests[0];
    expect(request?.url).toBe('/v1/openapi.json');
    expect(request?.headers.Authorization).toBeUndefined();

    fireEvent.change(within(nav).getByRole('searchbox', { name: '搜索接口' }), {
      target: { value: 'do-not-call' },
    });
    await waitFor(() => expect(within(nav).getAllByRole('button', { name: /\/opendock/ })).toHaveLength(1));
    expect(within(nav).getByText('移出免打扰名单')).toBeTruthy();

    // An operation that needs only a valid key says so.
    fireEvent.change(within(nav).getByRole('searchbox', { name: '搜索接口' }), { target: { value: '' } });
    fireEvent.click(await within(nav).findByText('当前密钥'));
    expect(await screen.findByText('任意有效密钥')).toBeTruthy();
  });

  it('documents a POST with a JSON body and generates the exact curl, Node and Python to copy', async () => {
    serveDocument(() => ({ status: 200, body: OPENAPI_FIXTURE }));
    const router = renderApp('/developer-options/docs');
    const nav = await screen.findByRole('navigation', { name: '接口列表' }, { timeout: 15_000 });
    fireEvent.click(within(nav).getByText('发起单通外呼'));
    await waitFor(() => expect(router.state.location.search).toBe('?op=POST+%2Fopendock%2Fv1%2Fcalls'));

    const operation = screen.getByRole('article', { name: 'POST /opendock/v1/calls' });
    expect(
      within(operation).getByText('立即返回通话 ID，通话在后台进行；结果见通话详情或 Webhook。'),
    ).toBeTruthy();
    expect(within(operation).getByText('calls:write')).toBeTruthy();
    expect(within(operation).getByText('通话（发起单通外呼） · 读写')).toBeTruthy();
    const parameters = within(operation).getByRole('table', { name: '请求参数' });
    expect(within(parameters).getByText('Idempotency-Key').closest('tr')?.textContent).toContain('请求头');
    const body = within(operation).getByRole('table', { name: '请求体字段' });
    const phone = within(body).getByText('phone').closest('tr') as HTMLElement;
    expect(within(phone).getByText('*')).toBeTruthy();
    expect(within(phone).getByText('被叫号码')).toBeTruthy();
    expect(within(phone).getByText('1–30 个字符')).toBeTruthy();
    expect(within(body).getByText('variables').closest('tr')?.textContent).toContain(
      'object<string, string>',
    );
    expect(within(operation).getByText('409')).toBeTruthy();

    expect(await sample('curl')).toBe(
      [
        'curl -X POST "http://localhost:3000/opendock/v1/calls" \\',
        '  -H "Authorization: Bearer $CALLPILOT_API_KEY" \\',
        '  -H "Idempotency-Key: $(uuidgen)" \\',
        '  -H "Content-Type: application/json" \\',
        `  -d '{`,
        '    "assistantId": "ast_5Kd8Lp",',
        '    "phone": "13800138000",',
        '    "variables": {',
        '      "客户姓名": "张先生"',
        '    }',
        `  }'`,
      ].join('\n'),
    );
    expect(await sample('Node')).toBe(
      [
        '// Node 18+，保存为 .mjs 后运行',
        "import { randomUUID } from 'node:crypto';",
        '',
        "const response = await fetch('http://localhost:3000/opendock/v1/calls', {",
        "  method: 'POST',",
        '  headers: {',
        NODE_AUTH_HEADER,
        "    'Idempotency-Key': randomUUID(),",
        "    'Content-Type': 'application/json',",
        '  },',
        '  body: JSON.stringify({',
        "    assistantId: 'ast_5Kd8Lp',",
        "    phone: '13800138000',",
        '    variables: {',
        "      '客户姓名': '张先生',",
        '    },',
        '  }),',
        '});',
        'console.log(response.status, await response.json());',
      ].join('\n'),
    );
    expect(await sample('Python')).toBe(
      [
        'import os',
        'import uuid',
        '',
        'import requests',
        '',
        'response = requests.post(',
        '    "http://localhost:3000/opendock/v1/calls",',
        '    headers={',
        `        "Authorization": f"Bearer {os.environ['CALLPILOT_API_KEY']}",`,
        '        "Idempotency-Key": str(uuid.uuid4()),',
        '    },',
        '    json={',
        '        "assistantId": "ast_5Kd8Lp",',
        '        "phone": "13800138000",',
        '        "variables": {',
        '            "客户姓名": "张先生",',
        '        },',
        '    },',
        '    timeout=30,',
        ')',
        'print(response.status_code, response.json())',
      ].join('\n'),
    );
  });

  it('generates a GET with its query parameters, and fills path parameters from their examples', async () => {
    serveDocument(() => ({ status: 200, body: OPENAPI_FIXTURE }));
    renderApp('/developer-options/docs?op=GET+%2Fopendock%2Fv1%2Fcalls');
    const operation = await screen.findByRole(
      'article',
      { name: 'GET /opendock/v1/calls' },
      { timeout: 15_000 },
    );
    expect(within(operation).getByText('records:read')).toBeTruthy();
    expect(within(operation).getByText('通话记录与录音 · 只读')).toBeTruthy();
    const limit = within(within(operation).getByRole('table', { name: '请求参数' })).getByText('limit');
    expect(limit.closest('tr')?.textContent).toBe('limit查询integer每页条数1–100默认 20');
    const response = within(operation).getByRole('table', { name: '响应字段' });
    expect(within(response).getByText('nextCursor').closest('tr')?.textContent).toContain('string | null');

    expect(await sample('curl')).toBe(
      [
        'curl "http://localhost:3000/opendock/v1/calls?limit=20&grade=A" \\',
        '  -H "Authorization: Bearer $CALLPILOT_API_KEY"',
      ].join('\n'),
    );
    expect(await sample('Node')).toBe(
      [
        '// Node 18+，保存为 .mjs 后运行',
        '',
        "const response = await fetch('http://localhost:3000/opendock/v1/calls?limit=20&grade=A', {",
        '  headers: {',
        NODE_AUTH_HEADER,
        '  },',
        '});',
        'console.log(response.status, await response.json());',
      ].join('\n'),
    );
    expect(await sample('Python')).toBe(
      [
        'import os',
        '',
        'import requests',
        '',
        'response = requests.get(',
        '    "http://localhost:3000/opendock/v1/calls",',
        '    params={',
        '        "limit": 20,',
        '        "grade": "A",',
        '    },',
        '    headers={',
        `        "Authorization": f"Bearer {os.environ['CALLPILOT_API_KEY']}",`,
        '    },',
        '    timeout=30,',
        ')',
        'print(response.status_code, response.json())',
      ].join('\n'),
    );

    fireEvent.click(screen.getByText('移出免打扰名单'));
    expect(await sample('curl')).toBe(
      [
        'curl -X DELETE "http://localhost:3000/opendock/v1/do-not-call/13800138000" \\',
        '  -H "Authorization: Bearer $CALLPILOT_API_KEY"',
      ].join('\n'),
    );
  });

  it('says honestly when the document cannot be loaded, and loads it on 重试', async () => {
    let available = false;
    serveDocument(() =>
      available
        ? { status: 200, body: OPENAPI_FIXTURE }
        : {
            status: 404,
            body: {
              success: false,
              status: 404,
              data: null,
              error: '接口不存在',
              message: '接口不存在',
              msg: '',
            },
          },
    );
    renderApp('/developer-options/docs');
    expect(await screen.findByText('接口文档加载失败', undefined, { timeout: 15_000 })).toBeTruthy();
    expect(screen.getByText('接口不存在')).toBeTruthy();
    expect(screen.queryByRole('navigation', { name: '接口列表' })).toBeNull();

    available = true;
    fireEvent.click(screen.getByRole('button', { name: '重试' }));
    expect(await screen.findByRole('navigation', { name: '接口列表' })).toBeTruthy();
  });
});
