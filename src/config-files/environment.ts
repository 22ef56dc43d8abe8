// Which environment variables an {"env": "NAME"} reference of a configuration file may read. A file
// chooses where a value goes (a webhook header is sent to a URL the file names too), so a reference
// to any variable would let whoever writes the files send the service's own secrets anywhere. Only
// the variables the operator set aside for the import are readable: those named with the prefix,
// and those listed in CONFIG_IMPORT_ENV_ALLOW; the service's own secrets never, whatever the list.
import { SERVICE_SECRET_KEYS } from '../config.js';

/** Variables with this prefix are meant for the import; the export names its variables so too. */
export const IMPORT_ENV_PREFIX = 'SVC_IMPORT_';

export interface ImportEnvironment {
  /** The value of the variable, or why a file may not have it. */
  read(name: string): string | { problem: string };
}

export function importEnvironment(env: Record<string, string | undefined>, allowList: readonly string[] = []): ImportEnvironment {
  const allowed = new Set(allowList);
  return {
    read(name) {
      if (SERVICE_SECRET_KEYS.has(name))
        return { problem: `environment variable ${name} is a secret of the service and is never imported` };
      const prefixed = name.startsWith(IMPORT_ENV_PREFIX) && name.length > IMPORT_ENV_PREFIX.length;
      if (!prefixed && !allowed.has(name)) {
        return {
          problem: `environment variable ${name} may not be referenced: only names starting with ${IMPORT_ENV_PREFIX} and those listed in CONFIG_IMPORT_ENV_ALLOW`,
        };
      }
      const value = env[name];
      return value === undefined || value === '' ? { problem: `environment variable ${name} is not set` } : value;
    },
  };
}
