export * from './codes.js';
export * from './limits.js';
export * from './fields.js';
export * from './ip.js';
export * from './text.js';
export * from './messages.js';
export * from './wire.js';
export * from './late.js';
