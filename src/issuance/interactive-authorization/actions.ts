// The steps an authorization request must go through: the iaeActions of the configurations it asks
// for, in the order of the request's configurations and, within one, in the configured order. The
// same action asked by two configurations runs once.
import { type IaeAction, IaeActionSchema } from '../../credential-configs/schemas.js';
import type { CredentialConfigService } from '../../credential-configs/service.js';
import { OAuthError } from '../../platform/http/problem.js';
import { underWebUrlPolicy } from '../../platform/http/web-urls.js';
import type { InteractiveState } from '../session.js';

export type { IaeAction };

export class InteractiveActions {
  constructor(private readonly configs: CredentialConfigService) {}

  /** The actions the configurations ask for, deduplicated, in order. */
  async of(tenantId: string, configurationIds: string[]): Promise<IaeAction[]> {
    const planned = new Map<string, IaeAction>();
    for (const id of configurationIds) {
      const config = await this.configs.find(tenantId, id);
      for (const raw of config?.iaeActions ?? []) {
        const action = parseAction(raw);
        planned.set(JSON.stringify(action), action);
      }
    }
    return [...planned.values()];
  }

  /** The configurations of `configurationIds` that ask for interactive authorization. */
  async requiring(tenantId: string, configurationIds: string[]): Promise<string[]> {
    const requiring: string[] = [];
    for (const id of configurationIds) {
      if ((await this.configs.find(tenantId, id))?.iaeActions?.length) requiring.push(id);
    }
    return requiring;
  }
}

/**
 * A stored action, typed. Stored documents are not judged by the web URL policy again (a URL saved
 * under another policy stays usable); one that no longer has the shape is a server fault.
 */
export function parseAction(raw: unknown): IaeAction {
  const parsed = underWebUrlPolicy('unjudged', () => IaeActionSchema.safeParse(raw));
  if (!parsed.success) throw new OAuthError(500, 'server_error', 'a configured interactive authorization step is malformed');
  return parsed.data;
}

/** The action of the step under way. */
export const currentAction = (state: InteractiveState): IaeAction => parseAction(state.actions[state.step]);
