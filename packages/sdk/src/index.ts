export type { components, operations, paths } from './generated/openapi.js';
