export { configFrom, limits, settings, type Config } from './config.js';
export { createApp, type AppOptions } from './http/app.js';
export { openStore, Store, StoreCorruptError, StoreLockedError } from './store/file/store.js';
export { fileBackend, openBackend, type Backend, type BackendOptions } from './store/backend.js';
export type { Storage } from './domain/storage/index.js';
export { ensureDemoData } from './domain/seed/demo.js';
export { loadSeed } from './domain/seed/load.js';
export { recipientsFor } from './domain/recipients.js';
export { logTransport, smtpTransport, startMailDelivery, type MailDelivery, type MailTransport } from './domain/mail-delivery.js';
