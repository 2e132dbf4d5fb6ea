import { OFFLINE_VOICE_PROVIDER, type VoiceOption } from '@callpilot/contracts';
import { Select } from 'antd';

/** A voice as an assistant (or the project's fallback) names it: who speaks, and which voice. */
export interface VoiceChoice {
  provider: string;
  voiceId: string;
}

// One select value for the pair: the same voice id may exist under two profiles.
const SEPARATOR = '\u001f';
const keyOf = (voice: VoiceChoice) => `${voice.provider}${SEPARATOR}${voice.voiceId}`;

const labelOf = (voice: VoiceOption) =>
  voice.provider === OFFLINE_VOICE_PROVIDER ? `${voice.name}（${voice.language}）` : voice.name;

/**
 * The voices grouped by who speaks them: 离线音色 first, then each synthesis profile by name. A
 * chosen voice missing from the list (a custom id typed for a self-hosted server, a profile's
 * voice list that changed) stays visible as itself rather than as a bare key.
 */
export function voiceGroups(voices: VoiceOption[], current?: VoiceChoice) {
  const groups: { key: string; label: string; options: { value: string; label: string }[] }[] = [];
  const groupOf = (provider: string, name: string) => {
    let group = groups.find((candidate) => candidate.key === provider);
    if (!group) {
      group = { key: provider, label: name, options: [] };
      groups.push(group);
    }
    return group;
  };
  groupOf(OFFLINE_VOICE_PROVIDER, '离线音色');
  for (const voice of voices) {
    groupOf(voice.provider, voice.providerName ?? '离线音色').options.push({
      value: keyOf(voice),
      label: labelOf(voice),
    });
  }
  if (current && !voices.some((voice) => keyOf(voice) === keyOf(current))) {
    const known = voices.find((voice) => voice.provider === current.provider);
    groupOf(current.provider, known?.providerName ?? '其他').options.push({
      value: keyOf(current),
      label: `${current.voiceId}（自定义音色）`,
    });
  }
  return groups.filter((group) => group.options.length > 0);
}

/** Every voice the project can speak with (assistants and call flows), grouped by provider; picks a provider and a voice at once. */
export function VoicePicker({
  id,
  voices,
  loading,
  value,
  onChange,
  disabled,
  ariaLabel,
}: {
  /** From the surrounding Form.Item, so its label names this select. */
  id?: string;
  voices: VoiceOption[] | undefined;
  loading?: boolean;
  value: VoiceChoice | undefined;
  onChange: (voice: VoiceChoice) => void;
  disabled?: boolean;
  ariaLabel?: string;
}) {
  return (
    <Select
      id={id}
      aria-label={ariaLabel}
      loading={loading}
      disabled={disabled}
      showSearch={{ optionFilterProp: 'label' }}
      value={value ? keyOf(value) : undefined}
      options={voiceGroups(voices ?? [], value)}
      onChange={(key: string) => {
        const [provider = OFFLINE_VOICE_PROVIDER, voiceId = ''] = key.split(SEPARATOR);
        onChange({ provider, voiceId });
      }}
    />
  );
}
