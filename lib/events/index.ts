// The event layer: what comes in over HTTP, what it means, and what we send.
export * from './types.js';
export { BadEventError } from './errors.js';
export type { BadEventStatus } from './errors.js';
export { fromHttp, DEFAULT_MAX_BODY_BYTES } from './http.js';
export type { IncomingHeaders, FromHttpOptions } from './http.js';
export { toTrigger, owningStatefulSet, KNOWN_EVENT_TYPES } from './trigger.js';
export { resyncPingEvent } from './ping.js';
export type { EventLike } from './trigger.js';
export { assignmentChangedEvent, swarmPath } from './assignment-changed.js';
export { apiServerEvent, toHttpMessage, DEFAULT_APISERVER_SOURCE } from './apiserver-event.js';
export type { ApiServerEventInput, HttpMessage } from './apiserver-event.js';
