import { describe, expect, it } from 'vitest';
import { sha256Hex, signTc3, tc3Date } from './tencent-signing';

describe('TC3-HMAC-SHA256', () => {
  // Tencent's published walk-through of signature v3 (签名方法 v3, https://cloud.tencent.com/document/api/213/30654;
  // English: https://www.tencentcloud.com/document/api/213/33224): CVM DescribeInstances in ap-guangzhou, its
  // SecretKey, timestamp and body, and the hashes and signature the page prints for each step. The page masks the
  // SecretId, which only appears in the Authorization header, never in the signed material.
  const example = {
    secretId: 'AKID**********************0123456789EXAMPLE',
    secretKey: 'Gu5t9xGARNpq86cd98joQYCN3EXAMPLE',
    service: 'cvm',
    host: 'cvm.tencentcloudapi.com',
    contentType: 'application/json; charset=utf-8',
    payload: '{"Limit": 1, "Filters": [{"Values": ["\\u672a\\u547d\\u540d"], "Name": "instance-name"}]}',
    timestamp: 1551113065,
  };

  it("reproduces the docs' example step by step", () => {
    const signed = signTc3(example);
    expect(sha256Hex(example.payload)).toBe(
      '35e9c5b0e3ae67532d3c9f17ead6c90222632e5b1ff7f6e89887f1398934f064',
    );
    expect(signed.canonicalRequest).toBe(
      'POST\n/\n\ncontent-type:application/json; charset=utf-8\nhost:cvm.tencentcloudapi.com\n\ncontent-type;host\n35e9c5b0e3ae67532d3c9f17ead6c90222632e5b1ff7f6e89887f1398934f064',
    );
    expect(sha256Hex(signed.canonicalRequest)).toBe(
      '5ffe6a04c0664d6b969fab9a13bdab201d63ee709638e2749d62a09ca18d7031',
    );
    expect(signed.stringToSign).toBe(
      'TC3-HMAC-SHA256\n1551113065\n2019-02-25/cvm/tc3_request\n5ffe6a04c0664d6b969fab9a13bdab201d63ee709638e2749d62a09ca18d7031',
    );
    expect(signed.signature).toBe('72e494ea809ad7a8c8f7a4507b9bddcbaa8e581f516e8da2f66e2c5a96525168');
    expect(signed.authorization).toBe(
      'TC3-HMAC-SHA256 Credential=AKID**********************0123456789EXAMPLE/2019-02-25/cvm/tc3_request, SignedHeaders=content-type;host, Signature=72e494ea809ad7a8c8f7a4507b9bddcbaa8e581f516e8da2f66e2c5a96525168',
    );
  });

  it('scopes by the UTC date, not the local one (the docs: 00:44 in UTC+8 is still the 25th)', () => {
    expect(tc3Date(1551113065)).toBe('2019-02-25');
  });
});
