// How a presentation of a credential fails the checks of its format: the wallet's fault (its reason
// becomes the session's errorReason and the wallet's invalid_request).
export class PresentationRejected extends Error {}
