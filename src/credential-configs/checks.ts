// Rules a configuration obeys as a whole, beyond the shape its schema describes. Errors name fields
// as the request does (body.config.docType), also on PATCH, where they may come from stored values.
import { knownFormat } from '../formats/index.js';
import type { FieldError } from '../platform/http/problem.js';
import { fieldErrors } from './fields.js';
import type { ConfigurationDocument } from './schemas.js';

export function checkConfiguration(doc: ConfigurationDocument): FieldError[] {
  const errors: FieldError[] = knownFormat(doc.config.format).configurationProblems(doc);
  if (doc.config.vcIssuer !== undefined && doc.config.format !== 'jwt_vc_json')
    errors.push({ field: 'body.config.vcIssuer', message: 'is for jwt_vc_json only' });
  for (const error of fieldErrors(doc)) errors.push({ field: `body.${error.field}`, message: error.message });
  return errors;
}
