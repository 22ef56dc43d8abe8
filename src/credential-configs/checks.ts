// Rules a configuration obeys as a whole, beyond the shape its schema describes. Errors name fields
// as the request does (body.config.docType), also on PATCH, where they may come from stored values.
import type { FieldError } from '../platform/http/problem.js';
import { fieldErrors } from './fields.js';
import type { ConfigurationDocument } from './schemas.js';

export function checkConfiguration(doc: ConfigurationDocument): FieldError[] {
  const errors: FieldError[] = [];
  if (doc.config.format === 'mso_mdoc') {
    if (!doc.config.docType) errors.push({ field: 'body.config.docType', message: 'is required when config.format is mso_mdoc' });
    if (doc.vct !== null) errors.push({ field: 'body.vct', message: 'is for dc+sd-jwt only; an mdoc has config.docType' });
  } else if (doc.config.docType !== undefined) {
    errors.push({ field: 'body.config.docType', message: 'is for mso_mdoc only; an SD-JWT VC has vct' });
  }
  for (const error of fieldErrors(doc)) errors.push({ field: `body.${error.field}`, message: error.message });
  return errors;
}
