import { OFFLINE_VOICE_PROVIDER, type SynthesisVendor } from '@callpilot/contracts';
import type { PresetVoice } from './synthesis';

/**
 * The preset voices the assistant editor offers per vendor: Mandarin voices whose vendor lists
 * them for customer service or general conversation at 8 kHz (a phone line), with the vendor's
 * own Chinese names. Sources, as published:
 * - CosyVoice: 百炼 "CosyVoice 音色列表" and 智能语音交互 "CosyVoice 流式文本语音合成" (cosyvoice-v2
 *   voices carry `_v2`; a model only speaks its own voices, and cosyvoice-v2 is the profile default).
 * - Aliyun NLS: 智能语音交互 "语音合成接口说明" 音色列表 (help.aliyun.com/document_detail/84435).
 * - Tencent: 语音合成 "音色列表" (cloud.tencent.com/document/product/1073/92668): 精品 and 大模型 voices.
 * - Volcengine: 语音合成 "音色列表" (volcengine.com/docs/6561/97465), the `_streaming` voices.
 * - OpenAI-compatible: OpenAI's built-in voices; self-hosted servers map them or take their own
 *   names, which the editor accepts as free text.
 * Cloned voices are not here: they belong to a project (voice-clones module).
 */
export const PRESET_VOICES: Record<SynthesisVendor, readonly PresetVoice[]> = {
  cosyvoice: [
    { voiceId: 'longxiaochun_v2', name: '龙小淳（温柔姐姐）', gender: 'female', language: 'zh-CN' },
    { voiceId: 'longwan_v2', name: '龙婉（普通话女声）', gender: 'female', language: 'zh-CN' },
    { voiceId: 'longxiaoxia_v2', name: '龙小夏（温柔女声）', gender: 'female', language: 'zh-CN' },
    { voiceId: 'loongbella_v2', name: 'Bella2.0（新闻女声）', gender: 'female', language: 'zh-CN' },
    { voiceId: 'longcheng_v2', name: '龙橙（阳光男声）', gender: 'male', language: 'zh-CN' },
    { voiceId: 'longshu_v2', name: '龙书（新闻男声）', gender: 'male', language: 'zh-CN' },
  ],
  aliyun_nls: [
    { voiceId: 'aixia', name: '艾夏（亲和女声·客服）', gender: 'female', language: 'zh-CN' },
    { voiceId: 'siyue', name: '思悦（温柔女声·客服）', gender: 'female', language: 'zh-CN' },
    { voiceId: 'aiyu', name: '艾雨（自然女声·客服）', gender: 'female', language: 'zh-CN' },
    { voiceId: 'xiaoyun', name: '小云（标准女声）', gender: 'female', language: 'zh-CN' },
    { voiceId: 'zhixiaobai', name: '知小白（普通话女声）', gender: 'female', language: 'zh-CN' },
    { voiceId: 'xiaogang', name: '小刚（标准男声）', gender: 'male', language: 'zh-CN' },
    { voiceId: 'aicheng', name: '艾诚（标准男声）', gender: 'male', language: 'zh-CN' },
    { voiceId: 'aida', name: '艾达（标准男声）', gender: 'male', language: 'zh-CN' },
  ],
  tencent: [
    { voiceId: '101003', name: '智美（客服女声）', gender: 'female', language: 'zh-CN' },
    { voiceId: '101007', name: '智娜（客服女声）', gender: 'female', language: 'zh-CN' },
    { voiceId: '101008', name: '智琪（客服女声）', gender: 'female', language: 'zh-CN' },
    { voiceId: '101001', name: '智瑜（情感女声）', gender: 'female', language: 'zh-CN' },
    { voiceId: '101002', name: '智聆（通用女声）', gender: 'female', language: 'zh-CN' },
    { voiceId: '502001', name: '智小柔（聊天女声·大模型）', gender: 'female', language: 'zh-CN' },
    { voiceId: '502004', name: '智小满（营销女声·大模型）', gender: 'female', language: 'zh-CN' },
    { voiceId: '101004', name: '智云（通用男声）', gender: 'male', language: 'zh-CN' },
    { voiceId: '101010', name: '智华（通用男声）', gender: 'male', language: 'zh-CN' },
    { voiceId: '502006', name: '智小悟（聊天男声·大模型）', gender: 'male', language: 'zh-CN' },
  ],
  volcengine: [
    { voiceId: 'BV001_streaming', name: '通用女声', gender: 'female', language: 'zh-CN' },
    { voiceId: 'BV700_streaming', name: '灿灿（女声）', gender: 'female', language: 'zh-CN' },
    { voiceId: 'BV406_streaming', name: '梓梓（超自然女声）', gender: 'female', language: 'zh-CN' },
    { voiceId: 'BV002_streaming', name: '通用男声', gender: 'male', language: 'zh-CN' },
    { voiceId: 'BV701_streaming', name: '擎苍（男声）', gender: 'male', language: 'zh-CN' },
    { voiceId: 'BV407_streaming', name: '燃燃（超自然男声）', gender: 'male', language: 'zh-CN' },
  ],
  openai_compatible: [
    { voiceId: 'alloy', name: 'Alloy（中性女声）', gender: 'female', language: 'zh-CN' },
    { voiceId: 'nova', name: 'Nova（明亮女声）', gender: 'female', language: 'zh-CN' },
    { voiceId: 'shimmer', name: 'Shimmer（柔和女声）', gender: 'female', language: 'zh-CN' },
    { voiceId: 'coral', name: 'Coral（温暖女声）', gender: 'female', language: 'zh-CN' },
    { voiceId: 'echo', name: 'Echo（沉稳男声）', gender: 'male', language: 'zh-CN' },
    { voiceId: 'onyx', name: 'Onyx（低沉男声）', gender: 'male', language: 'zh-CN' },
  ],
};

/** The offline voice used where a profile voice cannot be spoken yet. */
const OFFLINE_STAND_IN = { provider: OFFLINE_VOICE_PROVIDER, voiceId: 'cmn+f3' } as const;

/**
 * The voice the offline synthesiser speaks for `voice`: itself when it is an offline voice, else a
 * stand-in at the same speed and volume. Paths that only run espeak (simulated-call recordings,
 * a real line until its streaming synthesis is wired) use it so a profile voice never reaches
 * espeak as an unknown voice id.
 */
export function offlineVoiceFor<T extends { provider: string; voiceId: string }>(voice: T): T {
  return voice.provider === OFFLINE_VOICE_PROVIDER ? voice : { ...voice, ...OFFLINE_STAND_IN };
}
