// How a presentation fails. A PresentationRejected is the wallet's fault (its reason becomes the
// session's errorReason and the wallet's invalid_request); an OAuthError is answered as it is.
import { OAuthError } from '../platform/http/problem.js';

export { PresentationRejected } from '../formats/presentation-rejected.js';

export const invalidRequest = (description: string) => new OAuthError(400, 'invalid_request', description);
export const unknownRequest = () => new OAuthError(404, 'invalid_request', 'unknown or expired presentation request');
