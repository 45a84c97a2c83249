import { ConfigError } from "../../errors/error-classes.js";

export interface LoadApiKeyOptions {
  /** `llm.api_key_env`, or the vendor's default variable. */
  variable: string;
  /** "anthropic", "openai_compatible": names the provider in the message. */
  provider: string;
  env?: Readonly<Record<string, string | undefined>>;
}

/**
 * The API key from its environment variable; a missing or empty one is a `ConfigError` raised when the agent
 * loads, before any request, with a hint naming the variable.
 */
export function loadApiKey(options: LoadApiKeyOptions): string {
  const env = options.env ?? process.env;
  const key = env[options.variable]?.trim();
  if (key) return key;
  throw new ConfigError(
    `llm.provider "${options.provider}" needs an API key, and the environment variable ${options.variable} is not set`,
    {
      hint: `Set ${options.variable} (export ${options.variable}=...), or name another variable in llm.api_key_env`,
      context: { variable: options.variable },
    },
  );
}
