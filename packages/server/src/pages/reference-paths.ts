// Where the API reference lives, apart from its markup: the server routes to it and registers its OAuth redirect
// page at start, and loads the page itself only when someone opens it.
export const referencePath = '/help/api';
export const referenceAssetsPath = '/assets/reference';
/** Swagger UI's OAuth 2.0 redirect page: the demo application registers it, so "Authorize" works on a fresh instance. */
export const referenceOAuthRedirectPath = `${referenceAssetsPath}/oauth2-redirect.html`;
