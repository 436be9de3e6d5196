// The string formats the compiled checks (generated/contract.ts) use, as express-openapi-validator's request
// instances have them: ajv-formats in its fast mode, added over the validator's own formats (which it replaces all
// of), and OpenAPI 3.1's media-range, which the validator accepts as any string.
import { fastFormats } from 'ajv-formats/dist/formats.js';

export const formats: Record<string, unknown> = { ...fastFormats, 'media-range': true };
