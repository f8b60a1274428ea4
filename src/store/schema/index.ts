export * from './common.js';
export * from './users.js';
export * from './apps.js';
export * from './deploys.js';
export * from './events.js';
export * from './env.js';
export * from './services.js';
export * from './misc.js';
