import { type AssistantConfig, fillVariables } from '@callpilot/contracts';

/**
 * Every line the other party may hear, with the contact's values filled in. A variable left empty
 * takes its sample, so a test call or chat reads like a real call from the first try.
 */
export function fillConfig(config: AssistantConfig, requested: Record<string, string>): AssistantConfig {
  const values: Record<string, string> = {};
  for (const variable of config.variables) {
    const given = requested[variable.name]?.trim();
    values[variable.name] = given || variable.sample;
  }
  const fill = (text: string) => fillVariables(text, values);
  const c = config.conversation;
  return {
    ...config,
    openingLine: fill(config.openingLine),
    systemPrompt: fill(config.systemPrompt),
    conversation: {
      ...c,
      silenceReprompt: fill(c.silenceReprompt),
      closingLine: fill(c.closingLine),
      fallbackReply: fill(c.fallbackReply),
      optOutReply: fill(c.optOutReply),
      transferLine: fill(c.transferLine),
      voicemailMessage: fill(c.voicemailMessage),
    },
  };
}
