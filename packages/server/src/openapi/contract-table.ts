// The shape of the compiled contract (generated/contract.ts): http/contract-compiler.ts writes it at build time and
// http/request-validation.ts reads it at run time. A check is the name of its compiled function while the compiler
// writes the module, and the function itself once the module is loaded.

/** A compiled check, as ajv's standalone code writes it. */
export interface Check {
  (data: unknown): boolean;
  errors?: AjvError[] | null;
}

/** A problem a check found, as ajv reports it. */
export interface AjvError {
  keyword: string;
  instancePath: string;
  schemaPath: string;
  message?: string;
  params: Record<string, unknown>;
}

/** One operation of the document, with what the validator's request step needs of it. */
export interface ContractOperation<C = Check> {
  method: string;
  openApiRoute: string;
  expressRoute: string;
  /** Query parameters the validator checks for unencoded reserved characters (all but those with allowReserved). */
  query: string[];
  /** Query parameters whose names have brackets, which the validator leaves as they are. */
  literalBracketQuery: string[];
  body: { required: boolean | undefined; types: string[] } | null;
  /** The parameters' check; by declared content type, the body's and any discriminator's. */
  general: C;
  bodies: Record<string, { check: C; discriminator?: { property: string; options: string[]; checks: Record<string, C> } }>;
}

/** One route of the document, in the order the validator tries them, with its operations' indexes by method. */
export interface ContractRoute {
  expressRoute: string;
  openApiRoute: string;
  regexp: RegExp;
  keys: string[];
  methods: Record<string, number>;
}
