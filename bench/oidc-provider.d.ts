// The part of oidc-provider 8's API the benchmark's peer uses (the package ships no types).
declare module 'oidc-provider' {
  import type { Server } from 'node:http';
  interface Saved {
    save(): Promise<string>;
  }
  interface GrantModel extends Saved {
    addOIDCScope(scope: string): void;
  }
  interface ClientModel {
    clientId: string;
  }
  interface Configuration {
    adapter?: unknown;
    clients: object[];
    features?: object;
    rotateRefreshToken?: () => boolean;
    findAccount?: (ctx: unknown, id: string) => { accountId: string; claims: () => object };
    ttl?: Record<string, number>;
    cookies?: { keys: string[] };
  }
  export default class Provider {
    constructor(issuer: string, configuration: Configuration);
    proxy: boolean;
    listen(port: number, host: string): Server;
    Grant: new (payload: { accountId: string; clientId: string }) => GrantModel;
    Client: { find(id: string): Promise<ClientModel | undefined> };
    RefreshToken: new (payload: { accountId: string; client: ClientModel; grantId: string; scope: string; gty: string }) => Saved;
    AccessToken: new (payload: { accountId: string; client: ClientModel; grantId: string; scope: string; gty: string }) => Saved;
  }
}
declare module 'oidc-provider/lib/adapters/memory_adapter.js' {
  export default class MemoryAdapter {}
  export function setStorage(storage: Map<string, unknown>): void;
}
