import { Tabs } from 'antd';
import { DeveloperCodeBlock } from './developer-code-block';

const NODE_SAMPLE = `// npm install standardwebhooks express
import express from 'express';
import { Webhook } from 'standardwebhooks';

const wh = new Webhook(process.env.CALLPILOT_WEBHOOK_SECRET); // whsec_…
const app = express();

// 验签需要原始请求体：不要先用 express.json() 解析
app.post('/webhooks/callpilot', express.raw({ type: 'application/json' }), (req, res) => {
  let event;
  try {
    event = wh.verify(req.body.toString('utf8'), {
      'webhook-id': req.header('webhook-id'),
      'webhook-timestamp': req.header('webhook-timestamp'),
      'webhook-signature': req.header('webhook-signature'),
    });
  } catch {
    return res.status(400).send('invalid signature');
  }
  // 同一事件可能重试或重发：用 webhook-id 去重
  console.log(event.type, event.data);
  res.sendStatus(204);
});

app.listen(8080);`;

const PYTHON_SAMPLE = `# pip install standardwebhooks flask
import os

from flask import Flask, request
from standardwebhooks.webhooks import Webhook

wh = Webhook(os.environ["CALLPILOT_WEBHOOK_SECRET"])  # whsec_…
app = Flask(__name__)


@app.post("/webhooks/callpilot")
def callpilot_webhook():
    try:
        event = wh.verify(request.get_data(), {
            "webhook-id": request.headers["webhook-id"],
            "webhook-timestamp": request.headers["webhook-timestamp"],
            "webhook-signature": request.headers["webhook-signature"],
        })
    except Exception:
        return "invalid signature", 400
    # 同一事件可能重试或重发：用 webhook-id 去重
    print(event["type"], event["data"])
    return "", 204`;

/** 如何验证签名: the headers, the rule, and receivers in Node and Python with the standardwebhooks libraries. */
export function WebhookVerifyGuide() {
  return (
    <div className="flex flex-col gap-3 text-sm text-gray-600">
      <p className="m-0">
        每次投递带三个请求头：<code className="font-mono">webhook-id</code>（事件 ID，重试和重发不变）、
        <code className="font-mono">webhook-timestamp</code>（发送时间，Unix 秒）和{' '}
        <code className="font-mono">webhook-signature</code>（
        <code className="font-mono">v1,&lt;base64&gt;</code>
        ，轮换宽限期内有两个，以空格分隔）。签名是用密钥（去掉 <code className="font-mono">whsec_</code> 后
        base64 解码）对 <code className="font-mono">id.timestamp.body</code> 计算的
        HMAC-SHA256。请拒绝时间戳与当前相差超过 5 分钟的请求，以防重放；官方库已经这样做。
      </p>
      <Tabs
        size="small"
        items={[
          {
            key: 'node',
            label: 'Node',
            children: <DeveloperCodeBlock code={NODE_SAMPLE} label="Node 验签示例" />,
          },
          {
            key: 'python',
            label: 'Python',
            children: <DeveloperCodeBlock code={PYTHON_SAMPLE} label="Python 验签示例" />,
          },
        ]}
      />
    </div>
  );
}
