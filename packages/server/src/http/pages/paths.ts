// Where the pages are: what the session layer and the pages' headers are mounted on from the start, before the
// routers themselves load (pages-routes.ts).
export const signInPath = '/users/sign_in';
export const home = '/profile/applications';
export const devicePath = '/oauth/device';
