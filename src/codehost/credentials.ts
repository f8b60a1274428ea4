// The code-host credentials as they are now. The manifest flow writes new ones while the daemon runs, and
// a delivery signed with the new webhook secret must be accepted at once: everything that needs a
// secret reads it from this holder at the moment of use, never from a copy taken at start.
import type { Config } from '../config.js';

export interface CodehostCredentials {
  webhookSecret?: string;
  appId?: string;
  appSlug?: string;
  /** Path of the PEM private key file. */
  privateKeyPath?: string;
  clientId?: string;
  clientSecret?: string;
}

export interface CredentialsHolder {
  get(): Readonly<CodehostCredentials>;
  /** Replaces the given fields (the manifest flow's reload). */
  set(patch: CodehostCredentials): void;
  /** Called after every set (e.g. to drop cached installation tokens of an old app). */
  onChange(fn: () => void): void;
}

/** A holder seeded from the configuration the process started with. */
export function credentialsHolder(start: Config['codehost'] | CodehostCredentials): CredentialsHolder {
  let current: CodehostCredentials = {
    webhookSecret: start.webhookSecret,
    appId: start.appId,
    appSlug: start.appSlug,
    privateKeyPath: start.privateKeyPath,
    clientId: start.clientId,
    clientSecret: start.clientSecret,
  };
  const listeners: (() => void)[] = [];
  return {
    get: () => current,
    set(patch) {
      current = { ...current, ...patch };
      for (const fn of listeners) fn();
    },
    onChange: (fn) => void listeners.push(fn),
  };
}
